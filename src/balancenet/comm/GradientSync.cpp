// Helpers shared by the gradient strategies.
#include "balancenet/comm/GradientSync.h"

#include <torch/nn/module.h>

#include <ATen/ATen.h>

namespace balancenet::comm {

void packGradients(const std::vector<at::Tensor>& grads, const at::Tensor& scalars, at::Tensor& buffer) {
  int64_t total = scalars.numel();
  for (const auto& g : grads) total += g.numel();
  // On the gradients' device: a GPU's gradients are packed and summed where they are.
  const auto device = grads.empty() ? scalars.device() : grads.front().device();
  if (!buffer.defined() || buffer.numel() != total || buffer.device() != device)
    buffer = at::empty({total}, at::TensorOptions().dtype(at::kFloat).device(device));
  int64_t offset = 0;
  auto pack = [&](const at::Tensor& t) {
    buffer.narrow(0, offset, t.numel()).copy_(t.reshape({-1}));
    offset += t.numel();
  };
  for (const auto& g : grads) pack(g);
  pack(scalars);
}

void unpackGradients(const at::Tensor& buffer, const std::vector<at::Tensor>& grads, at::Tensor& scalars) {
  int64_t offset = 0;
  auto unpack = [&](const at::Tensor& t) {
    t.copy_(buffer.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  };
  for (const auto& g : grads) unpack(g);
  unpack(scalars);
}

ParameterList namedParameters(const torch::nn::Module& module) {
  ParameterList out;
  for (const auto& item : module.named_parameters()) out.push_back({item.key(), item.value()});
  return out;
}

std::string layerOf(const std::string& parameterName) {
  const auto dot = parameterName.rfind('.');
  return dot == std::string::npos ? parameterName : parameterName.substr(0, dot);
}

std::vector<LayerTraffic> trafficByLayer(const ParameterList& params, const std::string& method,
                                         const std::function<int64_t(int64_t)>& wireBytes) {
  return trafficByParameter(
      params, method, [&](const NamedParameter& p) { return wireBytes(p.tensor.numel() * p.tensor.element_size()); });
}

std::vector<LayerTraffic> trafficByParameter(const ParameterList& params, const std::string& method,
                                             const std::function<int64_t(const NamedParameter&)>& wireBytes) {
  std::vector<LayerTraffic> out;
  for (const auto& p : params) {
    const auto layer = layerOf(p.name);
    const int64_t wire = wireBytes(p);
    if (out.empty() || out.back().layer != layer) out.push_back({layer, method, 0, 0});
    out.back().bytesSent += wire;
    out.back().bytesReceived += wire;
  }
  return out;
}

bool sameLayout(const std::vector<at::Tensor>& current, const std::vector<at::Tensor>& state) {
  if (current.size() != state.size()) return false;
  for (size_t i = 0; i < current.size(); ++i)
    if (!current[i].sizes().equals(state[i].sizes()) || current[i].scalar_type() != state[i].scalar_type())
      return false;
  return true;
}

std::vector<at::Tensor> joinStates(const std::vector<std::vector<at::Tensor>>& parts) {
  std::vector<at::Tensor> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::optional<std::vector<std::vector<at::Tensor>>> splitState(const std::vector<std::vector<at::Tensor>>& parts,
                                                               const std::vector<at::Tensor>& state) {
  if (!sameLayout(joinStates(parts), state)) return std::nullopt;
  std::vector<std::vector<at::Tensor>> out;
  auto next = state.begin();
  for (const auto& p : parts) {
    out.emplace_back(next, next + static_cast<std::ptrdiff_t>(p.size()));
    next += static_cast<std::ptrdiff_t>(p.size());
  }
  return out;
}

int64_t ringAllReduceWireBytes(int64_t payloadBytes, int worldSize) {
  return worldSize <= 1 ? 0 : payloadBytes * 2 * (worldSize - 1) / worldSize;
}

}  // namespace balancenet::comm

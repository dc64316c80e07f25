// Flat weights: parameters and floating-point buffers, concatenated.
#include "balancenet/federated/process/ModelWeights.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::federated {

std::vector<at::Tensor> weightTensors(models::Network& net) {
  std::vector<at::Tensor> tensors;
  for (const auto& p : net.parameters()) tensors.push_back(p);
  for (const auto& b : net.buffers())
    if (at::isFloatingType(b.scalar_type())) tensors.push_back(b);
  return tensors;
}

at::Tensor flatWeights(models::Network& net) {
  std::vector<at::Tensor> flat;
  for (const auto& t : weightTensors(net)) flat.push_back(t.detach().reshape({-1}).to(at::kFloat));
  return at::cat(flat);
}

void loadFlatWeights(models::Network& net, const at::Tensor& flat) {
  at::NoGradGuard noGrad;
  int64_t offset = 0;
  const auto tensors = weightTensors(net);
  int64_t total = 0;
  for (const auto& t : tensors) total += t.numel();
  if (flat.numel() != total)
    throw InternalError(fmt::format("flat weights of {} values for a model of {}", flat.numel(), total));
  for (auto t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

ModelSignature modelSignature(models::Network& net) {
  ModelSignature s{flatWeights(net).numel(), fnv1a("")};
  auto add = [&s](const std::string& name, const at::Tensor& t) {
    s.hash = fnv1a(fmt::format("{}:{};", name, fmt::join(t.sizes(), "x")), s.hash);
  };
  for (const auto& p : net.named_parameters()) add(p.key(), p.value());
  for (const auto& b : net.named_buffers())
    if (at::isFloatingType(b.value().scalar_type())) add(b.key(), b.value());
  return s;
}

}  // namespace balancenet::federated

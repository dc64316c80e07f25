// Loading a TorchScript file and exposing its tensors as an nn::Module tree.
#include "balancenet/models/ScriptedNetwork.h"

#include <torch/script.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"

namespace balancenet::models {
namespace {

// The holder for "a.b" under `root`, created on the way (nn::Module names may not contain dots).
torch::nn::Module& holderFor(torch::nn::Module& root, const std::string& path) {
  torch::nn::Module* node = &root;
  size_t begin = 0;
  while (begin < path.size()) {
    const size_t dot = path.find('.', begin);
    const std::string part = path.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    auto children = node->named_children();
    node = children.contains(part) ? children[part].get()
                                   : node->register_module(part, std::make_shared<torch::nn::Module>()).get();
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return *node;
}

std::pair<std::string, std::string> splitLast(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? std::make_pair(std::string(), name)
                                  : std::make_pair(name.substr(0, dot), name.substr(dot + 1));
}

}  // namespace

bool isScriptedModelPath(const std::string& name) {
  return name.size() > 3 && (name.compare(name.size() - 3, 3, ".pt") == 0 || name.find('/') != std::string::npos);
}

ScriptedNetwork::ScriptedNetwork(const std::string& path) {
  try {
    module_ = std::make_unique<torch::jit::Module>(torch::jit::load(path));
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--model {}: not a readable TorchScript file ({})", path, firstLine(e.what())));
  }
  for (const auto& p : module_->named_parameters(/*recurse=*/true)) {
    auto [owner, leaf] = splitLast(p.name);
    auto& holder = owner.empty() ? static_cast<torch::nn::Module&>(*this) : holderFor(*this, owner);
    holder.register_parameter(leaf, p.value, /*requires_grad=*/true);
  }
  for (const auto& b : module_->named_buffers(/*recurse=*/true)) {
    auto [owner, leaf] = splitLast(b.name);
    auto& holder = owner.empty() ? static_cast<torch::nn::Module&>(*this) : holderFor(*this, owner);
    holder.register_buffer(leaf, b.value);
  }
  // The contract of every model: [N,1,28,28] in, [N,10] out. Checked once, in eval mode, without autograd.
  at::Tensor out;
  try {
    torch::NoGradGuard noGrad;
    module_->eval();
    out = module_->forward({at::zeros({2, kInputChannels, kInputSize, kInputSize})}).toTensor();
    module_->train();
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--model {}: forward on a [2,1,28,28] batch failed: {}", path, firstLine(e.what())));
  }
  if (out.dim() != 2 || out.size(0) != 2 || out.size(1) != kNumClasses)
    throw UsageError(fmt::format("--model {}: maps [2,1,28,28] to [{}] instead of [2,{}] logits", path,
                                 fmt::join(out.sizes().vec(), ","), kNumClasses));
}

ScriptedNetwork::~ScriptedNetwork() = default;

at::Tensor ScriptedNetwork::forward(const at::Tensor& x) { return module_->forward({x}).toTensor(); }

void ScriptedNetwork::train(bool on) {
  Network::train(on);
  module_->train(on);
}

}  // namespace balancenet::models

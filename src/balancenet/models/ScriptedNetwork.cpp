// Loading a TorchScript file and exposing its tensors as an nn::Module tree.
#include "balancenet/models/ScriptedNetwork.h"

#include <utility>

#include <ATen/ATen.h>
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

// Whether `child` has a forward that takes one tensor (besides self).
bool takesOneTensor(const torch::jit::Module& child) {
  const auto forward = child.find_method("forward");
  if (!forward) return false;
  const auto& arguments = forward->function().getSchema().arguments();
  return arguments.size() == 2 && arguments[1].type()->isSubtypeOf(*c10::TensorType::get());
}

// `module`'s top-level children as blocks when chaining them is its forward on every probe batch (the
// probes' outputs given in `expected`); empty otherwise. In eval mode, without autograd.
std::vector<BlockInfo> sequentialBlocks(torch::jit::Module& module, const std::vector<at::Tensor>& probes,
                                        const std::vector<at::Tensor>& expected) {
  // Tensors of the module itself would belong to no block (and a forward could use them between children).
  if (module.parameters(/*recurse=*/false).size() > 0 || module.buffers(/*recurse=*/false).size() > 0) return {};
  std::vector<BlockInfo> blocks;
  for (const auto& child : module.named_children()) {
    if (!takesOneTensor(child.value)) return {};
    BlockInfo block;
    block.name = child.name;
    block.kind = "scripted";
    for (const auto& p : child.value.parameters()) block.parameters += p.numel();
    blocks.push_back(std::move(block));
  }
  if (blocks.size() < 2) return {};
  for (size_t probe = 0; probe < probes.size(); ++probe) {
    at::Tensor x = probes[probe];
    for (BlockInfo& block : blocks) {
      try {
        const c10::IValue y = module.attr(block.name).toModule().forward({x});
        if (!y.isTensor()) return {};
        x = y.toTensor();
      } catch (const std::exception&) {
        return {};  // e.g. a child that expects what the forward computes between children
      }
      block.outputShape = x.sizes().slice(1).vec();
      block.outputElementsPerSample = x[0].numel();
      block.memoryPerSampleBytes = block.outputElementsPerSample * int64_t{4} * 2;
    }
    if (!x.sizes().equals(expected[probe].sizes()) || !at::equal(x, expected[probe])) return {};
  }
  return blocks;
}

// The children [first, end) of a sequential scripted module; its tensors are the network's holders.
class ScriptedRange : public BlockRange {
 public:
  explicit ScriptedRange(std::vector<torch::jit::Module> children) : children_(std::move(children)) {}
  at::Tensor forward(const at::Tensor& x) override {
    at::Tensor y = x;
    for (auto& child : children_) y = child.forward({y}).toTensor();
    return y;
  }
  void train(bool on = true) override {
    BlockRange::train(on);
    for (auto& child : children_) child.train(on);
  }

 private:
  std::vector<torch::jit::Module> children_;
};

}  // namespace

bool isScriptedModelPath(const std::string& name) {
  return name.size() > 3 && (name.compare(name.size() - 3, 3, ".pt") == 0 || name.find('/') != std::string::npos);
}

ScriptedNetwork::ScriptedNetwork(const std::string& path, const ModelOptions& options) {
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
  // The contract of every model: the data's samples in, options.outputShape() per sample out. Checked
  // once, in eval mode, without autograd. The blocks probe the same way: zeros, and a deterministic ramp
  // (a random batch would move the seed training draws from) that zeros alone could not tell apart from,
  // e.g., a forward ending in relu. Token models get token ids.
  const at::Tensor zeros =
      options.tokenInput ? at::zeros({2, options.inputShape.at(0)}, at::kLong) : options.probeBatch(2);
  const at::Tensor ramp =
      options.tokenInput ? options.probeBatch(2) : at::linspace(-1, 1, zeros.numel()).reshape(zeros.sizes());
  std::vector<int64_t> expected{2};
  wholeOutputShape_ = options.outputShape();
  expected.insert(expected.end(), wholeOutputShape_.begin(), wholeOutputShape_.end());
  const std::string given =
      fmt::format("[{}]{}", fmt::join(zeros.sizes().vec(), ","), options.tokenInput ? " token" : "");
  at::Tensor out;
  try {
    torch::NoGradGuard noGrad;
    module_->eval();
    out = module_->forward({zeros}).toTensor();
    if (out.sizes().vec() == expected)
      blocks_ = sequentialBlocks(*module_, {zeros, ramp}, {out, module_->forward({ramp}).toTensor()});
    module_->train();
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--model {}: forward on a {} batch (the data's samples) failed: {}", path, given,
                                 firstLine(e.what())));
  }
  if (out.sizes().vec() != expected)
    throw UsageError(fmt::format("--model {}: maps a {} batch to [{}] instead of [{}]", path, given,
                                 fmt::join(out.sizes().vec(), ","), fmt::join(expected, ",")));
}

ScriptedNetwork::~ScriptedNetwork() = default;

at::Tensor ScriptedNetwork::forward(const at::Tensor& x) { return module_->forward({x}).toTensor(); }

void ScriptedNetwork::train(bool on) {
  Network::train(on);
  module_->train(on);
}

std::vector<BlockInfo> ScriptedNetwork::blocks() const { return blocks_.empty() ? Network::blocks() : blocks_; }

std::shared_ptr<BlockRange> ScriptedNetwork::blockRange(size_t first, size_t end) {
  if (blocks_.empty()) return Network::blockRange(first, end);
  requireSpan(first, end, blocks_.size());
  std::vector<torch::jit::Module> children;
  for (size_t i = first; i < end; ++i) children.push_back(module_->attr(blocks_[i].name).toModule());
  auto range = std::make_shared<ScriptedRange>(std::move(children));
  // The holders of the children's tensors (a child without tensors has none), so the range's parameters
  // are the network's, named as in its state_dict.
  const auto holders = named_children();
  for (size_t i = first; i < end; ++i)
    if (const auto* holder = holders.find(blocks_[i].name)) range->register_module(blocks_[i].name, *holder);
  return range;
}

}  // namespace balancenet::models

// ScriptedNetwork: a TorchScript module (torch.jit.script / trace in Python) trained like a zoo model.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/Network.h"

namespace torch::jit {
struct Module;
}

namespace balancenet::models {

// The scripted module's parameters and buffers are registered under their own names ("fc.weight") in a
// tree of holder modules, so the trainer, the strategies' hooks, the optimiser and --export see the
// very tensors the script computes with, named as in Python's state_dict.
//
// Blocks: when the module's forward is its top-level children applied in order (checked at load: each
// child's forward takes one tensor, the module has no tensors of its own, and chaining the children
// reproduces forward exactly on two probe batches in eval mode), each child is a block, kind "scripted",
// named as the child, its output shape from the probe. FLOPs are unknown (0); memory per sample is a
// rough estimate: the block's output elements x 4 bytes x 2 (the activation and its gradient). Any other
// module is one block (Network's fallback).
class ScriptedNetwork : public Network {
 public:
  // Throws UsageError when the file is missing, is not TorchScript, or does not map the data's samples
  // (options.probeBatch) to options.outputShape() per sample.
  ScriptedNetwork(const std::string& path, const ModelOptions& options);
  ~ScriptedNetwork() override;
  at::Tensor forward(const at::Tensor& x) override;
  void train(bool on = true) override;
  std::vector<BlockInfo> blocks() const override;
  std::shared_ptr<BlockRange> blockRange(size_t first, size_t end) override;

 private:
  std::unique_ptr<torch::jit::Module> module_;
  std::vector<BlockInfo> blocks_;  // the top-level children; empty when forward is not their chain
};

// True when --model names a TorchScript file rather than a zoo model.
bool isScriptedModelPath(const std::string& name);

}  // namespace balancenet::models

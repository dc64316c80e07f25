// ScriptedNetwork: a TorchScript module (torch.jit.script / trace in Python) trained like a zoo model.
#pragma once
#include <memory>
#include <string>

#include "balancenet/models/Network.h"

namespace torch::jit {
struct Module;
}

namespace balancenet::models {

// The scripted module's parameters and buffers are registered under their own names ("fc.weight") in a
// tree of holder modules, so the trainer, the strategies' hooks, the optimiser and --export see the
// very tensors the script computes with, named as in Python's state_dict.
class ScriptedNetwork : public Network {
 public:
  // Throws UsageError when the file is missing, is not TorchScript, or does not map [N,1,28,28] to [N,10].
  explicit ScriptedNetwork(const std::string& path);
  ~ScriptedNetwork() override;
  at::Tensor forward(const at::Tensor& x) override;
  void train(bool on = true) override;

 private:
  std::unique_ptr<torch::jit::Module> module_;
};

// True when --model names a TorchScript file rather than a zoo model.
bool isScriptedModelPath(const std::string& name);

}  // namespace balancenet::models

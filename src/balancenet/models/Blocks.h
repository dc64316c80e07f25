// Blocks: a model as an ordered list of partitionable units, what pipeline stages are cut from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace balancenet::models {

// One unit a pipeline cut may not split: a conv with its BatchNorm, activation and pooling, a linear
// layer with its activation and dropout, a residual block, a TorchScript model's top-level child.
//
// Zoo models (LayerBuilder cuts them while it builds): a block starts at every conv ("conv1", "conv2",
// ...), linear layer ("fc1", ...) and residual block ("res<stage>.<i>", both from 1: "res1.1" is the
// first block of the first stage); resnet's first conv unit is "stem". BatchNorm, ReLU, pooling,
// padding, flatten and dropout belong to the block before them; layers before the first block (mlp's
// flatten, vgg16's input padding) belong to the first. Kinds: "conv", "linear", "residual".
// TorchScript models whose forward is their top-level children in order: one block per child, named
// as the child, kind "scripted" (see ScriptedNetwork.h); any other network: one block, "model".
struct BlockInfo {
  std::string name;                     // "conv3", "res2.1", "fc1": unique within the model
  std::string kind;                     // "conv", "linear", "residual", "scripted", ...
  int64_t parameters = 0;               // numel over the block's parameters
  int64_t flopsPerSample = 0;           // forward, ShapeTracker's convention (0 where unknown: scripted)
  std::vector<int64_t> outputShape;     // per sample, e.g. {64, 14, 14} or {128}: what a cut after it sends
  int64_t outputElementsPerSample = 0;  // product of outputShape
  // Training memory one more sample costs inside this block (activations kept for backward and their
  // gradients), ModelInfo::memoryPerSampleBytes's share of it: the sum over blocks is that figure.
  int64_t memoryPerSampleBytes = 0;
};

// A contiguous run [first, end) of a network's blocks as a module of its own. Its parameters and buffers
// are the network's own tensors (shared, not copied), so training a range trains the network.
class BlockRange : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;
};

}  // namespace balancenet::models

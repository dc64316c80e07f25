// LayerBuilder: appends layers to a Sequential while a ShapeTracker follows their shapes and FLOPs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/sequential.h>

#include "balancenet/models/BatchNormFactory.h"
#include "balancenet/models/Blocks.h"
#include "balancenet/models/LinearFactory.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

// A block as the builder records it: layers [firstLayer, endLayer) of layers() and what BlockInfo says
// of them (see Blocks.h for how models are cut into blocks).
struct LayerBlock {
  BlockInfo info;
  size_t firstLayer = 0;
  size_t endLayer = 0;
};

// Every layer's input size is read from the tracker, so a model states only output sizes and the
// FLOP count is a by-product of building. Calls chain: b.conv(32, 3).relu().maxPool(2, 2).
//
// It also cuts the layers into blocks while it builds: conv, linear and module each start a block
// ("conv<k>", "fc<k>", the module's given name); BatchNorm, ReLU, pooling, padding, flatten and dropout
// join the block before them, and layers before the first block (mlp's flatten, vgg16's padding) join
// the first one. A block's FLOPs and memory are the tracker's growth over its layers.
class LayerBuilder {
 public:
  LayerBuilder(ShapeTracker& tracker, BatchNormFactory batchNorm, LinearFactory linear = {});

  LayerBuilder& conv(int64_t outChannels, int64_t kernel, int64_t stride = 1, int64_t pad = 0, bool bias = true);
  // conv without bias (BN's shift makes it redundant) + BatchNorm + ReLU: the VGG/ResNet unit.
  LayerBuilder& convBnRelu(int64_t outChannels, int64_t kernel, int64_t stride = 1, int64_t pad = 0);
  LayerBuilder& batchNorm();  // over the current channels, through the factory
  LayerBuilder& relu();
  LayerBuilder& maxPool(int64_t kernel, int64_t stride, int64_t pad = 0);
  LayerBuilder& adaptiveAvgPool(int64_t side);  // to side x side, whatever the input
  LayerBuilder& zeroPad(int64_t pad);
  LayerBuilder& globalAvgPool();
  LayerBuilder& flatten();
  LayerBuilder& linear(int64_t outFeatures);  // through the linear factory
  LayerBuilder& dropout(double p);            // p == 0 adds nothing, so such models are deterministic
  // A composite layer (e.g. a residual block) that has already moved the tracker itself: one block.
  LayerBuilder& module(torch::nn::AnyModule layer, std::string blockName, std::string kind = "residual");
  // Renames the block being built (e.g. resnet's first conv unit: "stem"). Names must stay unique.
  LayerBuilder& nameBlock(std::string name);

  ShapeTracker& tracker() { return tracker_; }
  torch::nn::Sequential layers() const { return layers_; }
  // The blocks so far, each with its parameter count, FLOPs, memory and output shape.
  std::vector<LayerBlock> blocks() const;

  // The factory's module, or torch::nn::BatchNorm2d(channels) when the factory is empty.
  static torch::nn::AnyModule makeBatchNorm(const BatchNormFactory& factory, int64_t channels);

 private:
  // Called after every layer: a new block or the current one grows to the end of layers_.
  void record(const char* startsKind = nullptr, std::string name = {});

  // A block with the tracker's cumulative FLOPs and activations at its end; blocks() takes differences.
  struct Span {
    LayerBlock block;
    int64_t flopsEnd = 0;
    int64_t activationsEnd = 0;
  };

  ShapeTracker& tracker_;
  BatchNormFactory batchNorm_;
  LinearFactory linear_;
  torch::nn::Sequential layers_;
  std::vector<Span> spans_;
  int64_t flopsStart_;  // the tracker's counts when building began: the first block's baseline
  int64_t activationsStart_;
  int convs_ = 0;  // numbering of conv<k> and fc<k>
  int linears_ = 0;
};

}  // namespace balancenet::models

// LayerBuilder: appends layers to a Sequential while a ShapeTracker follows their shapes and FLOPs.
#pragma once
#include <cstdint>

#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/sequential.h>

#include "balancenet/models/BatchNormFactory.h"
#include "balancenet/models/LinearFactory.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

// Every layer's input size is read from the tracker, so a model states only output sizes and the
// FLOP count is a by-product of building. Calls chain: b.conv(32, 3).relu().maxPool(2, 2).
class LayerBuilder {
 public:
  LayerBuilder(ShapeTracker& tracker, BatchNormFactory batchNorm, LinearFactory linear = {});

  LayerBuilder& conv(int64_t outChannels, int64_t kernel, int64_t stride = 1, int64_t pad = 0, bool bias = true);
  // conv without bias (BN's shift makes it redundant) + BatchNorm + ReLU: the VGG/ResNet unit.
  LayerBuilder& convBnRelu(int64_t outChannels, int64_t kernel, int64_t stride = 1, int64_t pad = 0);
  LayerBuilder& batchNorm();  // over the current channels, through the factory
  LayerBuilder& relu();
  LayerBuilder& maxPool(int64_t kernel, int64_t stride);
  LayerBuilder& zeroPad(int64_t pad);
  LayerBuilder& globalAvgPool();
  LayerBuilder& flatten();
  LayerBuilder& linear(int64_t outFeatures);  // through the linear factory
  LayerBuilder& dropout(double p);            // p == 0 adds nothing, so such models are deterministic
  // A composite layer (e.g. a residual block) that has already moved the tracker itself.
  LayerBuilder& module(torch::nn::AnyModule layer);

  ShapeTracker& tracker() { return tracker_; }
  const BatchNormFactory& batchNormFactory() const { return batchNorm_; }
  torch::nn::Sequential layers() const { return layers_; }

  // The factory's module, or torch::nn::BatchNorm2d(channels) when the factory is empty.
  static torch::nn::AnyModule makeBatchNorm(const BatchNormFactory& factory, int64_t channels);

 private:
  ShapeTracker& tracker_;
  BatchNormFactory batchNorm_;
  LinearFactory linear_;
  torch::nn::Sequential layers_;
};

}  // namespace balancenet::models

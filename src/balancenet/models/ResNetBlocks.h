// ResNetBlocks: the residual blocks of ResNet, BasicBlock (ResNet-18/34) and Bottleneck (ResNet-50+).
#pragma once
#include <cstdint>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>

#include "balancenet/models/BatchNormFactory.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

// relu(main(x) + shortcut(x)). Subclasses only build the main branch; the shortcut is the identity,
// or a strided 1x1 conv + BN projection where the main branch changes the shape.
class ResidualBlock : public torch::nn::Module {
 public:
  at::Tensor forward(const at::Tensor& x);

 protected:
  // `main` was built on `branch`, a fork of `tracker`; on return `tracker` stands after the block.
  void assemble(ShapeTracker& tracker, const ShapeTracker& branch, torch::nn::Sequential main,
                const BatchNormFactory& batchNorm, int64_t stride);

 private:
  torch::nn::Sequential main_{nullptr};
  torch::nn::Sequential shortcut_{nullptr};  // empty: identity
};

// Two 3x3 convs; the first carries the stride.
class BasicBlock : public ResidualBlock {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(ShapeTracker& tracker, const BatchNormFactory& batchNorm, int64_t planes, int64_t stride);
};

// 1x1 reduce to `planes`, 3x3 with the stride (torchvision's "ResNet v1.5"), 1x1 expand to 4 * planes.
class Bottleneck : public ResidualBlock {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(ShapeTracker& tracker, const BatchNormFactory& batchNorm, int64_t planes, int64_t stride);
};

}  // namespace balancenet::models

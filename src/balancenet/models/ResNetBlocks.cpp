// ResNetBlocks: construction and forward pass of the residual blocks.
#include "balancenet/models/ResNetBlocks.h"

#include <utility>

#include <ATen/ATen.h>

#include "balancenet/models/LayerBuilder.h"

namespace balancenet::models {

at::Tensor ResidualBlock::forward(const at::Tensor& x) {
  // An empty Sequential refuses forward(), so the identity shortcut is spelled out.
  at::Tensor identity = shortcut_->is_empty() ? x : shortcut_->forward(x);
  return at::relu(main_->forward(x) + identity);
}

void ResidualBlock::assemble(ShapeTracker& tracker, const ShapeTracker& branch, torch::nn::Sequential main,
                             const BatchNormFactory& batchNorm, int64_t stride) {
  main_ = register_module("main", std::move(main));
  ShapeTracker shortcutShape = tracker.fork();
  LayerBuilder shortcut(shortcutShape, batchNorm);
  if (!branch.sameShape(tracker)) shortcut.conv(branch.channels(), 1, stride, 0, /*bias=*/false).batchNorm();
  shortcut_ = register_module("shortcut", shortcut.layers());
  tracker.join(branch, shortcutShape);  // also catches a stride the projection could not match
}

BasicBlock::BasicBlock(ShapeTracker& tracker, const BatchNormFactory& batchNorm, int64_t planes, int64_t stride) {
  ShapeTracker branch = tracker.fork();
  LayerBuilder main(branch, batchNorm);
  main.convBnRelu(planes, 3, stride, 1)
      .conv(planes * kExpansion, 3, 1, 1, /*bias=*/false)
      .batchNorm();  // relu comes after the sum
  assemble(tracker, branch, main.layers(), batchNorm, stride);
}

Bottleneck::Bottleneck(ShapeTracker& tracker, const BatchNormFactory& batchNorm, int64_t planes, int64_t stride) {
  ShapeTracker branch = tracker.fork();
  LayerBuilder main(branch, batchNorm);
  main.convBnRelu(planes, 1)
      .convBnRelu(planes, 3, stride, 1)
      .conv(planes * kExpansion, 1, 1, 0, /*bias=*/false)
      .batchNorm();
  assemble(tracker, branch, main.layers(), batchNorm, stride);
}

}  // namespace balancenet::models

// ResNet: 3x3 stem, residual stages, global average pool, fc 10.
#include "balancenet/models/ResNet.h"

#include <memory>

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/models/LayerBuilder.h"
#include "balancenet/models/ResNetBlocks.h"

namespace balancenet::models {

namespace {

torch::nn::AnyModule makeBlock(ResNetBlock kind, ShapeTracker& tracker, const BatchNormFactory& batchNorm,
                               int64_t planes, int64_t stride) {
  if (kind == ResNetBlock::Basic)
    return torch::nn::AnyModule(std::make_shared<BasicBlock>(tracker, batchNorm, planes, stride));
  return torch::nn::AnyModule(std::make_shared<Bottleneck>(tracker, batchNorm, planes, stride));
}

}  // namespace

ResNet::ResNet(const ModelOptions& options, ShapeTracker& tracker, const ResNetLayout& layout) {
  // The ImageNet stem (7x7 stride 2 + maxpool) would shrink 28x28 to 7x7 before the first stage; the
  // CIFAR stem keeps full resolution, so the stages run at 28, 14, 7 and 4 pixels. From 64 pixels up the
  // ImageNet stem is the one that fits (224: stages at 56, 28, 14 and 7).
  LayerBuilder b(tracker, options.batchNorm, options.linear);
  if (std::min(tracker.height(), tracker.width()) >= kImageNetStemFrom)
    b.convBnRelu(options.scaled(64), 7, 2, 3).maxPool(3, 2, 1).nameBlock("stem");
  else
    b.convBnRelu(options.scaled(64), 3, 1, 1).nameBlock("stem");
  for (size_t stage = 0; stage < layout.blocksPerStage.size(); ++stage) {
    const int64_t planes = options.scaled(int64_t{64} << stage);
    for (int64_t i = 0; i < layout.blocksPerStage[stage]; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      b.module(makeBlock(layout.block, tracker, options.batchNorm, planes, stride),
               fmt::format("res{}.{}", stage + 1, i + 1));
    }
  }
  // No dropout in ResNet by default; an explicit --dropout applies before the classifier.
  b.globalAvgPool().flatten().dropout(options.dropoutOr(0.0)).linear(options.outputs);
  setLayers(b);
}

}  // namespace balancenet::models

// Vgg16: (conv3x3 + BN + relu) x 13 in five pooled groups, then fc 512, relu, dropout, fc 10.
#include "balancenet/models/Vgg16.h"

#include <vector>

#include "balancenet/models/LayerBuilder.h"

namespace balancenet::models {

namespace {
constexpr int64_t kPool = 0;  // "M" in the VGG paper's configuration tables
const std::vector<int64_t> kConfigD = {64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                                       kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
}  // namespace

Vgg16::Vgg16(const ModelOptions& options, ShapeTracker& tracker) {
  // Five 2x2 pools would take 28 to 0 (28,14,7,3,1,0). Zero-padding an image smaller than 32 to 32x32
  // keeps all five, as on CIFAR, and ends in a 1x1 map (28: the classifier sees exactly 512*width features);
  // 224 (ImageNet) ends in 7x7, as torchvision's VGG does.
  LayerBuilder b(tracker, options.batchNorm, options.linear);
  const int64_t side = std::min(tracker.height(), tracker.width());
  if (side < 32) b.zeroPad((32 - side + 1) / 2);
  for (int64_t entry : kConfigD) {
    if (entry == kPool)
      b.maxPool(2, 2);
    else
      b.convBnRelu(options.scaled(entry), 3, 1, 1);
  }
  b.flatten().linear(options.scaled(512)).relu().dropout(options.dropoutOr(0.5)).linear(options.outputs);
  setLayers(b);
}

}  // namespace balancenet::models

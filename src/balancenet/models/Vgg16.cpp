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
  // Five 2x2 pools would take 28 to 0 (28,14,7,3,1,0). Zero-padding the input by 2 to 32x32 keeps all
  // five, as on CIFAR, and ends in a 1x1 map, so the classifier sees exactly 512*width features.
  LayerBuilder b(tracker, options.batchNorm, options.linear);
  b.zeroPad(2);
  for (int64_t entry : kConfigD) {
    if (entry == kPool)
      b.maxPool(2, 2);
    else
      b.convBnRelu(options.scaled(entry), 3, 1, 1);
  }
  b.flatten().linear(options.scaled(512)).relu().dropout(options.dropoutOr(0.5)).linear(kNumClasses);
  setLayers(b);
}

}  // namespace balancenet::models

// AlexNet: conv 64,192,384,256,256 with three max pools, then dropout/fc 1024/dropout/fc 1024/fc 10.
#include "balancenet/models/AlexNet.h"

#include "balancenet/models/LayerBuilder.h"

namespace balancenet::models {

AlexNet::AlexNet(const ModelOptions& options, ShapeTracker& tracker) {
  // ImageNet AlexNet opens with 11x11 stride 4, which would leave a 28x28 image at 5x5 after one
  // layer. Here: 5x5 stride 1 for the first two convs (the original's larger early receptive fields),
  // 3x3 after, all "same"-padded; the pools take 28 -> 14 -> 7 -> 3, so the classifier sees 256*3*3.
  const double p = options.dropoutOr(0.5);
  LayerBuilder b(tracker, options.batchNorm, options.linear);
  b.conv(options.scaled(64), 5, 1, 2)
      .relu()
      .maxPool(2, 2)
      .conv(options.scaled(192), 5, 1, 2)
      .relu()
      .maxPool(2, 2)
      .conv(options.scaled(384), 3, 1, 1)
      .relu()
      .conv(options.scaled(256), 3, 1, 1)
      .relu()
      .conv(options.scaled(256), 3, 1, 1)
      .relu()
      .maxPool(3, 2);
  // Larger images (CIFAR's 32 ends at 3x3 too; 224 at 27x27) are pooled to 3x3, as torchvision's AlexNet
  // pools to 6x6: the classifier keeps its size whatever the input.
  if (tracker.height() > 3 || tracker.width() > 3) b.adaptiveAvgPool(3);
  b.flatten()
      .dropout(p)
      .linear(options.scaled(1024))
      .relu()
      .dropout(p)
      .linear(options.scaled(1024))
      .relu()
      .linear(options.outputs);
  setLayers(b);
}

}  // namespace balancenet::models

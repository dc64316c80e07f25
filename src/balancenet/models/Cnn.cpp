// Cnn: conv3x3 32, conv3x3 64, maxpool 2, dropout 0.25, fc 128, dropout 0.5, fc 10 (Keras mnist_cnn).
#include "balancenet/models/Cnn.h"

#include "balancenet/models/LayerBuilder.h"

namespace balancenet::models {

Cnn::Cnn(const ModelOptions& options, ShapeTracker& tracker) {
  // No padding, as in Keras: 28 -> 26 -> 24 -> pool 12, so 64*12*12 = 9216 features at width 1.
  LayerBuilder b(tracker, options.batchNorm, options.linear);
  b.conv(options.scaled(32), 3)
      .relu()
      .conv(options.scaled(64), 3)
      .relu()
      .maxPool(2, 2)
      .dropout(options.dropoutOr(0.25))
      .flatten()
      .linear(options.scaled(128))
      .relu()
      .dropout(options.dropoutOr(0.5))
      .linear(options.outputs);
  setLayers(b);
}

}  // namespace balancenet::models

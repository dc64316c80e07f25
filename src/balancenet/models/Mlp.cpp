// Mlp: flatten, fc 256, relu, fc 128, relu, fc to the outputs; dropout after each hidden layer only if asked for.
#include "balancenet/models/Mlp.h"

#include "balancenet/models/LayerBuilder.h"

namespace balancenet::models {

Mlp::Mlp(const ModelOptions& options, ShapeTracker& tracker) {
  const double p = options.dropoutOr(0.0);
  LayerBuilder b(tracker, options.batchNorm, options.linear);
  b.flatten()
      .linear(options.scaled(256))
      .relu()
      .dropout(p)
      .linear(options.scaled(128))
      .relu()
      .dropout(p)
      .linear(options.outputs);
  setLayers(b);
}

}  // namespace balancenet::models

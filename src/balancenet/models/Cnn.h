// Cnn: the paper's baseline, the Keras MNIST example CNN.
#pragma once
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/SequentialNetwork.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

class Cnn : public SequentialNetwork {
 public:
  Cnn(const ModelOptions& options, ShapeTracker& tracker);
};

}  // namespace balancenet::models

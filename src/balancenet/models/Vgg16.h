// Vgg16: the 13-conv VGG16 configuration with BatchNorm; images below 32x32 are zero-padded to 32.
#pragma once
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/SequentialNetwork.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

class Vgg16 : public SequentialNetwork {
 public:
  Vgg16(const ModelOptions& options, ShapeTracker& tracker);
};

}  // namespace balancenet::models

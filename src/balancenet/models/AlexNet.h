// AlexNet: the five-conv AlexNet layout, with kernels and strides shrunk for 28x28 inputs.
#pragma once
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/SequentialNetwork.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

class AlexNet : public SequentialNetwork {
 public:
  AlexNet(const ModelOptions& options, ShapeTracker& tracker);
};

}  // namespace balancenet::models

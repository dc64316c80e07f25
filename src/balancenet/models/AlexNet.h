// AlexNet: the five-conv AlexNet layout, kernels and strides shrunk for small images, any size pooled to 3x3.
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

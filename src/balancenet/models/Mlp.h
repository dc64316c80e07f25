// Mlp: a fully connected network, features (any sample shape, flattened) -> 256 -> 128 -> outputs.
#pragma once
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/SequentialNetwork.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

class Mlp : public SequentialNetwork {
 public:
  Mlp(const ModelOptions& options, ShapeTracker& tracker);
};

}  // namespace balancenet::models

// ModelSignature: which model a checkpoint belongs to (its name and every parameter's name and shape), so
// that resuming another model is one clear error instead of a shape mismatch deep in torch.
#pragma once
#include <string>
#include <vector>

#include "balancenet/models/Network.h"

namespace balancenet::checkpoint {

struct ModelSignature {
  std::string model;                 // --model as given (a zoo name or a TorchScript path)
  std::vector<std::string> tensors;  // "name 32x1x5x5" per parameter, in the model's order

  static ModelSignature of(const std::string& model, const models::Network& net);
  // "cnn (8 tensors, 25,354 parameters)": enough to tell two models apart in one line.
  std::string describe() const;
  // Empty when equal; else what differs first ("model cnn vs mlp", "tensor 3: ... vs ...").
  std::string difference(const ModelSignature& other) const;
};

}  // namespace balancenet::checkpoint

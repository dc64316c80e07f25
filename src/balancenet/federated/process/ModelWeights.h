// ModelWeights: a network's weights as one flat float32 vector (what the federated server and clients
// exchange): its parameters, then its floating-point buffers (BatchNorm's running statistics), in order.
#pragma once
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/federated/Enrolment.h"
#include "balancenet/models/Network.h"

namespace balancenet::federated {

// The tensors the flat vector is made of, in its order (they share the network's storage).
std::vector<at::Tensor> weightTensors(models::Network& net);
// A new float32 vector of every weight, in weightTensors' order.
at::Tensor flatWeights(models::Network& net);
// Copies `flat` (from flatWeights of the same model) into the network. Throws InternalError on a length mismatch.
void loadFlatWeights(models::Network& net, const at::Tensor& flat);
// The flat size and a hash of every parameter's and buffer's name and shape: what a joining client and the
// server compare (their data's classes and input shape shape the model).
ModelSignature modelSignature(models::Network& net);

}  // namespace balancenet::federated

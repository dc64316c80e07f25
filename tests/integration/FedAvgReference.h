// FedAvgReference: what FedAvg with one local step must equal, computed in the test process: one step of
// synchronous data parallelism on the union of the clients' first local batches, gradients weighted by samples.
#pragma once
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/data/Dataset.h"
#include "balancenet/models/Network.h"

namespace balancenet::testing {

struct ReferenceClient {
  std::shared_ptr<const data::Dataset> data;  // its training data (shard), normalised as the client's
  std::vector<int64_t> batch;                 // its first local batch (positions in data)
  double weight = 0;                          // its samples over all clients' samples
};

// The parameters after one SGD step of `lr` from the flat weights `start` on the weighted mean of the clients'
// cross-entropy gradients (`net` is left at `start`).
std::vector<at::Tensor> dataParallelStep(models::Network& net, const at::Tensor& start,
                                         const std::vector<ReferenceClient>& clients, double lr);

// The largest absolute difference between two parameter lists of the same shapes.
double maxDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b);

}  // namespace balancenet::testing

// FederatedClient: one client process: its shard of the training set, then tasks from the server until it
// says stop (see docs/federated.md).
#pragma once
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <vector>

#include "balancenet/data/MnistDataset.h"
#include "balancenet/federated/FederatedProcess.h"

namespace c10d {
class Store;
}

namespace balancenet::federated {

// Client `client` (0-based) of the job at `store`. Returns the exit code (0 after the server's stop).
int runFederatedClient(const ProcessSettings& settings, int client, const c10::intrusive_ptr<c10d::Store>& store);

// The labels of a dataset as a vector (what dirichletShards partitions).
std::vector<int64_t> labelVector(const data::MnistDataset& set);

}  // namespace balancenet::federated

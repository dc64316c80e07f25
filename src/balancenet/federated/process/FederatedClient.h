// FederatedClient: one client process: its shard of the training set, then tasks from the server until it
// says stop (see docs/federated.md).
#pragma once
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "balancenet/data/Dataset.h"
#include "balancenet/federated/process/ClientLink.h"
#include "balancenet/federated/process/FederatedProcess.h"
#include "balancenet/federated/process/HeldOutSplit.h"
#include "balancenet/federated/process/LocalTraining.h"
#include "balancenet/objective/Objective.h"

namespace c10d {
class Store;
}

namespace balancenet::federated {

// Client `client` (0-based) of the job at `store`. Returns the exit code (0 after the server's stop).
int runFederatedClient(const ProcessSettings& settings, int client, const c10::intrusive_ptr<c10d::Store>& store);

// What the task loop needs beside the model and the data: the seed and the (client, clients) salt of the local
// batches (a joined client's id under a fixed large count, so no two ids share a stream), and the pace by round.
struct TaskLoopOptions {
  uint64_t seed = 1;
  int saltClients = 1;
  int client = 0;
  std::function<ClientPace(int64_t round)> pace;
  ClientLink link;  // the emulated link (--net-delay-ms, --net-bandwidth-mbps): none by default
};

// Tasks from the server until it says stop (returns 0): the received model evaluated on the held-out part where
// the task asks, local training on the training part, the weights' change back.
int serveTasks(ClientChannel& channel, models::Network& net, const ClientData& local,
               const objective::Objective& objective, const TaskLoopOptions& options);

// The clients' shards of a training set: a Dirichlet split of each class where samples have classes,
// else (token windows, regression) of the whole set as one class, so alpha still skews shard sizes.
std::vector<std::vector<int64_t>> datasetShards(const data::Dataset& train, int clients, double alpha, uint64_t seed);

// What partition.csv counts: each sample's class (0 for all where there are none) and the class count.
struct ShardLabels {
  std::vector<int64_t> labels;
  int64_t classes = 1;
};
ShardLabels shardLabels(const data::Dataset& train);

}  // namespace balancenet::federated

// A federated client: keeps only its shard, trains locally on each task, sends the weights' change back.
#include "balancenet/federated/FederatedClient.h"

#include <ATen/ATen.h>

#include <spdlog/spdlog.h>

#include "balancenet/core/PortableRandom.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/federated/LabelPartition.h"
#include "balancenet/federated/LocalTraining.h"
#include "balancenet/federated/ModelWeights.h"
#include "balancenet/models/ModelForData.h"

namespace balancenet::federated {

ShardLabels shardLabels(const data::Dataset& train) {
  ShardLabels out{train.classLabels(), train.spec().classes};
  if (out.labels.empty()) out = {std::vector<int64_t>(static_cast<size_t>(train.size()), 0), 1};
  return out;
}

std::vector<std::vector<int64_t>> datasetShards(const data::Dataset& train, int clients, double alpha, uint64_t seed) {
  const ShardLabels l = shardLabels(train);
  return dirichletShards(l.labels, clients, alpha, seed, l.classes);
}

namespace {

// The same partition the server computes, from the same labels and seed; every other sample is dropped.
ClientShard loadShard(const ProcessSettings& s, int client) {
  const auto train = data::openDataset(s.data).train;
  const auto shards = datasetShards(*train, s.options.clients, s.options.alpha, s.options.seed);
  return takeShard(train, shards.at(client));
}

ClientPace paceAt(const ProcessSettings& s, int64_t round, int client) {
  ClientPace pace;
  if (!s.paceMode || s.pace.empty()) return pace;
  pace.mode = s.paceMode;
  pace.factor = s.pace.at(round, client);
  return pace;
}

}  // namespace

// The task loop of every client, launched or joined: a task's weights in, local training, the change out.
int serveTasks(ClientChannel& channel, models::Network& net, const ClientShard& shard,
               const objective::Objective& objective, const TaskLoopOptions& o) {
  const int64_t modelSize = flatWeights(net).numel();
  for (;;) {
    Message task = channel.receive(modelSize);
    if (task.header.kind == MessageKind::Stop) return 0;
    loadFlatWeights(net, task.model);
    // Dropout's masks from (seed, round, client) too: a resumed run's fresh client draws what the first one did.
    const uint64_t salt = static_cast<uint64_t>(task.header.round) * o.saltClients + o.client;
    at::manual_seed(splitmix64(o.seed ^ splitmix64(salt)));
    LocalBatches batches(o.seed, task.header.round, o.saltClients, o.client, shard.size(), task.header.batch);
    const LocalWork work = trainLocally(net, shard, objective, task.header, batches, o.pace(task.header.round));
    MessageHeader reply = task.header;
    reply.kind = MessageKind::Update;
    reply.doneSteps = work.doneSteps;
    reply.samples = work.samples;
    reply.computeSeconds = work.computeSeconds;
    reply.stoppedEarly = work.stoppedEarly;
    channel.send(reply, flatWeights(net) - task.model);
  }
}

int runFederatedClient(const ProcessSettings& s, int client, const c10::intrusive_ptr<c10d::Store>& store) {
  const ClientShard shard = loadShard(s, client);
  const objective::Objective objective(shard.data->spec(), s.objective);
  models::ModelOptions modelOptions = s.model;
  models::fitModelToData(modelOptions, shard.data->spec());
  auto built = models::buildModel(modelOptions);  // the architecture; the weights come with every task
  auto channel = ClientChannel::connectClient(store, client, s.channel);
  spdlog::info("client {}: {} samples in its shard (generation {})", client, shard.size(), channel->generation());
  TaskLoopOptions loop{s.options.seed, s.options.clients, client,
                       [&s, client](int64_t round) { return paceAt(s, round, client); }};
  return serveTasks(*channel, *built.net, shard, objective, loop);
}

}  // namespace balancenet::federated

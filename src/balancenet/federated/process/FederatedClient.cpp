// A federated client: keeps only its shard, trains locally on each task, sends the weights' change back.
#include "balancenet/federated/process/FederatedClient.h"

#include <ATen/ATen.h>

#include <spdlog/spdlog.h>

#include "balancenet/core/PortableRandom.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/federated/LabelPartition.h"
#include "balancenet/federated/process/ClientEvaluation.h"
#include "balancenet/federated/process/ClientLink.h"
#include "balancenet/federated/process/HeldOutSplit.h"
#include "balancenet/federated/process/LocalTraining.h"
#include "balancenet/federated/process/ModelWeights.h"
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

// The task loop of every client, launched or joined: a task's weights in, the global model evaluated on the
// held-out samples where asked, local training, the change out.
int serveTasks(ClientChannel& channel, models::Network& net, const ClientData& local,
               const objective::Objective& objective, const TaskLoopOptions& o) {
  const ClientShard& shard = local.train;
  const int64_t modelSize = flatWeights(net).numel();
  for (;;) {
    Message task = channel.receive(modelSize);
    if (task.header.kind == MessageKind::Stop) return 0;
    emulateTransfer(o.link, messageBytes(modelSize));  // the download on its emulated link
    loadFlatWeights(net, task.model);
    MessageHeader reply = task.header;
    evaluateForTask(task.header, net, local.heldOut, objective, reply);  // the global model, before training
    // Dropout's masks from (seed, round, client) too: a resumed run's fresh client draws what the first one did.
    const uint64_t salt = static_cast<uint64_t>(task.header.round) * o.saltClients + o.client;
    at::manual_seed(splitmix64(o.seed ^ splitmix64(salt)));
    LocalBatches batches(o.seed, task.header.round, o.saltClients, o.client, shard.size(), task.header.batch);
    const LocalWork work = trainLocally(net, shard, objective, task.header, batches, o.pace(task.header.round));
    reply.kind = MessageKind::Update;
    reply.doneSteps = work.doneSteps;
    reply.samples = work.samples;
    reply.computeSeconds = work.computeSeconds;
    reply.stoppedEarly = work.stoppedEarly;
    const at::Tensor delta = flatWeights(net) - task.model;
    emulateTransfer(o.link, messageBytes(modelSize));  // the upload
    channel.send(reply, delta);
  }
}

int runFederatedClient(const ProcessSettings& s, int client, const c10::intrusive_ptr<c10d::Store>& store) {
  const ClientData local = splitClientData(loadShard(s, client), s.options.clientEvalFraction, s.options.seed, client);
  const objective::Objective objective(local.train.data->spec(), s.objective);
  models::ModelOptions modelOptions = s.model;
  models::fitModelToData(modelOptions, local.train.data->spec());
  auto built = models::buildModel(modelOptions);  // the architecture; the weights come with every task
  auto channel = ClientChannel::connectClient(store, client, s.channel);
  spdlog::info("client {}: {} samples to train on, {} held out (generation {})", client, local.train.size(),
               local.heldOut ? local.heldOut->size() : 0, channel->generation());
  TaskLoopOptions loop{s.options.seed, s.options.clients, client,
                       [&s, client](int64_t round) { return paceAt(s, round, client); },
                       clientLinkOf(s.netDelayMs, s.netBandwidthMbps, client)};
  return serveTasks(*channel, *built.net, local, objective, loop);
}

}  // namespace balancenet::federated

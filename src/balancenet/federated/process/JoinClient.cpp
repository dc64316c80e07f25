// The joining client (see JoinClient.h and EnrolledRoster.cpp for the enrolment protocol).
#include "balancenet/federated/process/JoinClient.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/federated/Enrolment.h"
#include "balancenet/federated/process/FederatedClient.h"
#include "balancenet/federated/process/HeldOutSplit.h"
#include "balancenet/federated/process/ModelWeights.h"
#include "balancenet/models/ModelForData.h"

namespace balancenet::federated {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until `key` is in the store; nothing when the server has finished first (or `timeout` passed: throws).
std::optional<std::string> awaitKey(c10d::Store& store, const std::string& key, const JoinSettings& s,
                                    std::optional<std::chrono::milliseconds> timeout) {
  const auto start = Clock::now();
  for (;;) {
    if (store.check({key})) return recordText(store.get(key));
    if (store.check({kServerFinishedKey})) return std::nullopt;
    if (timeout && Clock::now() - start > *timeout)
      throw RuntimeFailure(
          fmt::format("the server at {} published no model within {:.0f} s", s.where, timeout->count() / 1000.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int joinFinished(const JoinSettings& s) {
  spdlog::info("the server at {} has finished its run; nothing to join", s.where);
  return 0;
}

// The client's data spec with the server's classes: a client whose shard lacks the last labels still builds
// the server's model (its output size is the server's, not its own largest label + 1).
data::DatasetSpec specFor(const data::Dataset& train, const ServedModel& served, const JoinSettings& s) {
  data::DatasetSpec spec = train.spec();
  if (spec.target != data::TargetKind::Class || served.classes <= 0) return spec;
  if (spec.classes > served.classes)
    throw UsageError(fmt::format("{}'s labels go up to {} but the server's model has {} classes",
                                 s.data.source.empty() ? std::string("this client's data") : s.data.source,
                                 spec.classes - 1, served.classes));
  spec.classes = served.classes;
  return spec;
}

Enrolment enrolmentOf(const std::string& name, const data::Dataset& train, int64_t classes, int64_t trainSamples,
                      models::Network& net, const std::string& model) {
  const ShardLabels l = shardLabels(train);
  std::vector<int64_t> counts(static_cast<size_t>(std::max(classes, l.classes)), 0);
  for (int64_t y : l.labels)
    if (y >= 0 && y < static_cast<int64_t>(counts.size())) ++counts[static_cast<size_t>(y)];
  return {name, trainSamples, counts, modelSignature(net), model};
}

// The channel to the server; none when the server finished its run meanwhile. A server that stopped (its store
// gone) is said in one line instead of Gloo's "Failed to recv, got 0 bytes".
std::unique_ptr<ClientChannel> connectOrSayWhy(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                               const JoinSettings& s) {
  try {
    return ClientChannel::connectClient(store, client, s.channel);
  } catch (const std::exception& e) {
    bool finished = false;
    try {
      finished = store->check({kServerFinishedKey});
    } catch (const std::exception&) {
      throw RuntimeFailure(
          fmt::format("the server at {} went away before this client's channel formed (its run "
                      "ended or it stopped): {}",
                      s.where, firstLine(e.what())));
    }
    if (finished) return nullptr;
    throw;
  }
}

}  // namespace

ServedModel servedModelOf(const models::ModelOptions& model, uint64_t seed, double clientEvalFraction) {
  ServedModel m;
  m.name = model.name;
  m.width = model.width;
  m.dropout = model.dropout;
  m.layers = model.layers;
  m.heads = model.heads;
  m.embed = model.embed;
  m.seed = seed;
  m.clientEvalFraction = clientEvalFraction;
  return m;
}

models::ModelOptions modelOptionsOf(const ServedModel& served) {
  models::ModelOptions o;
  o.name = served.name;
  o.width = served.width;
  o.dropout = served.dropout;
  o.layers = served.layers;
  o.heads = served.heads;
  o.embed = served.embed;
  return o;
}

int runJoinClient(const JoinSettings& s, const c10::intrusive_ptr<c10d::Store>& store) {
  const auto servedText = awaitKey(*store, kServedModelKey, s, s.timeout);
  if (!servedText) return joinFinished(s);
  const ServedModel served = decodeServedModel(*servedText);
  const auto train = data::openDataset(s.data).train;
  models::ModelOptions modelOptions = modelOptionsOf(served);
  const data::DatasetSpec spec = specFor(*train, served, s);
  models::fitModelToData(modelOptions, spec);
  auto built = models::buildModel(modelOptions);  // the architecture; the weights come with every task

  // Enrol: a request number, the record under it, then the server's answer (within 50 ms of a live server).
  const int64_t k = store->add(kRequestCountKey, 1);
  // What it trains on: its data less the share it holds out for federated evaluation (the count is known now; which
  // samples, once it has its id).
  const int64_t trainSamples = train->size() - clientHeldOutCount(train->size(), served.clientEvalFraction);
  store->set(
      requestKey(k),
      recordBytes(encodeEnrolment(enrolmentOf(s.name, *train, spec.classes, trainSamples, *built.net, s.model))));
  spdlog::info("{}: enrolled with the server at {} ({} samples); waiting for its answer", s.name, s.where,
               train->size());
  const auto replyText = awaitKey(*store, replyKey(k), s, std::nullopt);
  if (!replyText) return joinFinished(s);
  const EnrolmentReply reply = decodeReply(*replyText);
  if (!reply.accepted) throw UsageError("the server refused this client: " + reply.why);

  auto channel = connectOrSayWhy(store, reply.client, s);
  if (!channel) return joinFinished(s);
  spdlog::info("client {} ({}): accepted, {} samples (generation {})", reply.client, s.name, train->size(),
               channel->generation());
  const objective::Objective objective(spec, s.objective);
  const ClientData local = splitClientData(ClientShard{train}, served.clientEvalFraction, served.seed, reply.client);
  TaskLoopOptions loop{served.seed, kJoinSaltClients, reply.client,
                       [&s](int64_t) {
                         ClientPace pace;
                         if (s.paceMode) pace = {s.paceMode, s.pace};
                         return pace;
                       },
                       s.link};
  serveTasks(*channel, *built.net, local, objective, loop);
  spdlog::info("client {} ({}): the server stopped; done", reply.client, s.name);
  return 0;
}

}  // namespace balancenet::federated

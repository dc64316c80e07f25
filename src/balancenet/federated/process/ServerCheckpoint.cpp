// Server state <-> bytes: a JSON header (counts, estimates, records) then the raw float32 weights.
#include "balancenet/federated/process/ServerCheckpoint.h"

#include <ATen/ATen.h>

#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/checkpoint/Resume.h"
#include "balancenet/core/Error.h"
#include "balancenet/federated/StrategyRegistry.h"

namespace balancenet::federated {
namespace {

using nlohmann::json;

json toJson(const RoundRecord& r) {
  json clients = json::array();
  for (const auto& c : r.clients)
    clients.push_back({{"client", c.client},
                       {"assigned", c.assignedSteps},
                       {"done", c.doneSteps},
                       {"samples", c.samples},
                       {"upload", c.uploadBytes},
                       {"seconds", c.seconds},
                       {"compute", c.computeSeconds},
                       {"staleness", c.staleness},
                       {"status", c.status}});
  json j{{"round", r.round},
         {"wall", r.wallSeconds},
         {"length", r.roundSeconds},
         {"download", r.downloadBytes},
         {"clients", clients}};
  j["accuracy"] = r.testAccuracy ? json(*r.testAccuracy) : json(nullptr);
  j["loss"] = r.testLoss ? json(*r.testLoss) : json(nullptr);
  j["client_evaluations"] = r.clientEvaluations;
  return j;
}

RoundRecord recordFrom(const json& j) {
  RoundRecord r;
  r.round = j.at("round");
  r.wallSeconds = j.at("wall");
  r.roundSeconds = j.at("length");
  r.downloadBytes = j.at("download");
  if (!j.at("accuracy").is_null()) r.testAccuracy = j.at("accuracy").get<double>();
  if (!j.at("loss").is_null()) r.testLoss = j.at("loss").get<double>();
  for (const auto& c : j.at("clients")) {
    ClientRoundRecord cr;
    cr.client = c.at("client");
    cr.assignedSteps = c.at("assigned");
    cr.doneSteps = c.at("done");
    cr.samples = c.at("samples");
    cr.uploadBytes = c.at("upload");
    cr.seconds = c.at("seconds");
    cr.computeSeconds = c.at("compute");
    cr.staleness = c.at("staleness");
    cr.status = c.at("status");
    r.clients.push_back(cr);
  }
  // Absent in the checkpoints of a run before federated evaluation.
  if (j.contains("client_evaluations"))
    r.clientEvaluations = j.at("client_evaluations").get<std::vector<ClientEvaluationRecord>>();
  return r;
}

}  // namespace

std::string federatedIdentityOptimizer(const FederatedOptions& options) {
  std::string name = "federated " + options.strategy;
  if (options.serverOpt != "avg") name += " " + options.serverOpt;  // avg: the identity from before --server-opt
  // The held-out share decides which samples each client trains on: a resume with another one would train on other
  // samples. The usual share (the default; none for an asynchronous strategy) keeps the identity from before.
  const double usual = makeStrategy(options)->asynchronous() ? 0 : FederatedOptions{}.clientEvalFraction;
  if (options.clientEvalFraction != usual)
    name += fmt::format(" --client-eval-fraction {}", options.clientEvalFraction);
  return name;
}

checkpoint::RunIdentity federatedIdentity(const FederatedOptions& options, const std::string& modelName,
                                          const models::Network& net) {
  checkpoint::RunIdentity run;
  run.signature = checkpoint::ModelSignature::of(modelName, net);
  run.optimizer = federatedIdentityOptimizer(options);
  run.worldSize = options.clients;
  run.globalBatch = options.localBatch;
  run.seed = options.seed;
  return run;
}

std::string encodeServerState(const ServerState& s) {
  json records = json::array();
  for (const auto& r : s.records) records.push_back(toJson(r));
  json header{{"round", s.round},
              {"version", s.version},
              {"samples_per_second", s.samplesPerSecond},
              {"client_names", s.clientNames},
              {"wall", s.wallSeconds},
              {"weights", s.global.numel()},
              {"records", records},
              {"tasks_in_flight", s.tasksInFlight},
              {"tasks_lost_on_resume", s.tasksLostOnResume}};
  std::vector<at::Tensor> moments;  // m then v, each present only once the optimiser made them
  for (const auto& t : {s.optimizer.m, s.optimizer.v})
    if (t.defined()) moments.push_back(t.contiguous().to(at::kDouble).reshape({-1}));
  if (!moments.empty()) header["moments"] = moments.size();
  const std::string text = header.dump();
  const uint64_t length = text.size();
  const auto weights = s.global.contiguous().to(at::kFloat);
  std::string bytes(sizeof length, '\0');
  std::memcpy(bytes.data(), &length, sizeof length);
  bytes += text;
  bytes.append(reinterpret_cast<const char*>(weights.data_ptr<float>()), weights.numel() * sizeof(float));
  for (const auto& t : moments)
    bytes.append(reinterpret_cast<const char*>(t.data_ptr<double>()), t.numel() * sizeof(double));
  return bytes;
}

ServerState decodeServerState(const std::string& bytes) {
  uint64_t length = 0;
  if (bytes.size() < sizeof length) throw RuntimeFailure("federated server state: truncated");
  std::memcpy(&length, bytes.data(), sizeof length);
  if (bytes.size() < sizeof length + length) throw RuntimeFailure("federated server state: truncated header");
  ServerState s;
  try {
    const auto header = json::parse(bytes.substr(sizeof length, length));
    s.round = header.at("round");
    s.version = header.at("version");
    s.samplesPerSecond = header.at("samples_per_second").get<std::vector<double>>();
    // Absent in older checkpoints: their enrolled clients were known by the order they joined in.
    s.clientNames = header.value("client_names", std::vector<std::string>{});
    s.wallSeconds = header.at("wall");
    s.tasksInFlight = header.value("tasks_in_flight", int64_t{0});  // absent in checkpoints before issue 33
    s.tasksLostOnResume = header.value("tasks_lost_on_resume", int64_t{0});
    for (const auto& r : header.at("records")) s.records.push_back(recordFrom(r));
    const int64_t n = header.at("weights");
    const int64_t moments = header.value("moments", 0);
    if (moments < 0 || moments > 2 ||
        bytes.size() != sizeof length + length + n * (sizeof(float) + moments * sizeof(double)))
      throw RuntimeFailure("federated server state: the weights' length does not match");
    const char* cursor = bytes.data() + sizeof length + length;
    s.global = at::empty({n}, at::kFloat);
    std::memcpy(s.global.data_ptr<float>(), cursor, n * sizeof(float));
    cursor += n * sizeof(float);
    for (int64_t k = 0; k < moments; ++k, cursor += n * sizeof(double)) {
      auto& t = k == 0 ? s.optimizer.m : s.optimizer.v;
      t = at::empty({n}, at::kDouble);
      std::memcpy(t.data_ptr<double>(), cursor, n * sizeof(double));
    }
  } catch (const json::exception& e) {
    throw RuntimeFailure(fmt::format("federated server state: {}", e.what()));
  }
  return s;
}

void preflightServerCheckpoints(const std::string& dir, int keep, bool resume, const FederatedOptions& options,
                                const std::string& modelName, const models::Network& net) {
  if (dir.empty()) return;
  checkpoint::CheckpointStore store(dir, keep);
  if (!resume) return checkpoint::requireNoCheckpoints(store);
  checkpoint::findResumable(store, federatedIdentity(options, modelName, net), options.rounds,
                            [](const std::string& m) { spdlog::warn("{}", m); });
}

}  // namespace balancenet::federated

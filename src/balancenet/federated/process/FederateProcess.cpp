// The wiring of a federate job's processes to the federated module: their settings from the JobConfig.
#include "balancenet/federated/process/FederateProcess.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/federated/process/FederatedClient.h"
#include "balancenet/federated/process/FederatedServer.h"
#include "balancenet/job/JobRendezvous.h"

namespace balancenet::federated {
using job::JobConfig;
using job::rendezvousOptions;
namespace {

// summary.json's settings: what compare and report show beside the results.
std::string settingsJson(const JobConfig& c) {
  const auto& o = *c.federated;
  const auto& steps = o.localSteps;
  nlohmann::json j{
      {"model", c.model.name},
      {"local_steps", steps.drawn() ? fmt::format("{}:{}", steps.low, steps.high) : fmt::format("{}", steps.low)},
      {"local_batch", o.localBatch},
      {"fraction", o.fraction},
      {"deadline_s", o.deadlineS},
      {"mu", o.mu},
      {"buffer", o.bufferSize},
      {"server_lr", o.serverLr},
      {"lr", o.clientLr},
      {"seed", o.seed},
      {"rounds_asked", o.rounds},
      {"time_budget_s", o.timeBudgetS},
      {"client_eval_fraction", o.clientEvalFraction},
      {"client_eval_every", o.clientEvalEvery},

      {"server_opt", o.serverOpt},
      {"server_momentum", o.serverMomentum},
      {"server_beta2", o.serverBeta2},
      {"server_tau", o.serverTau},
      {"client_momentum", o.clientMomentum},
      {"trim_beta", o.trimBeta},
      {"max_update_norm", o.maxUpdateNorm}};
  j["alpha"] = o.alpha == federated::kIid ? nlohmann::json("iid") : nlohmann::json(o.alpha);
  return j.dump();
}

}  // namespace

federated::ProcessSettings processSettings(const JobConfig& c, const comm::RendezvousOptions& rv) {
  federated::ProcessSettings s;
  s.options = *c.federated;
  s.model = c.model;
  s.data = c.data;
  s.objective = c.objective;
  s.channel.host = rv.glooHost();
  s.channel.iface = rv.iface;
  if (!c.emulation.nodeSpeed.empty()) {
    s.paceMode = emulation::PaceMode::Paced;
    s.pace = c.emulation.nodeSpeed;
  } else if (!c.emulation.slowdown.empty()) {
    s.paceMode = emulation::PaceMode::Relative;
    s.pace = c.emulation.slowdown;
  }
  s.netDelayMs = c.emulation.netDelayMs;
  s.netBandwidthMbps = c.emulation.netBandwidthMbps;
  s.runDir = c.trainer.runDir;
  s.saveParams = c.saveParams;
  s.checkpoint = c.checkpoint;
  s.peerTimeout = c.resilience.peerTimeout;
  s.joinTimeout = c.launch.rendezvousTimeout;
  s.progressSeconds = c.trainer.progressSeconds;
  s.settingsJson = settingsJson(c);
  return s;
}

int runFederatedProcess(const JobConfig& c) {
  setIntraOpThreads(c.threads);
  const comm::RendezvousOptions rv = rendezvousOptions(c);
  const auto settings = processSettings(c, rv);
  auto store = comm::connectJobStore(rv);
  if (c.worker->rank == 0) return federated::runFederatedServer(settings, store);
  return federated::runFederatedClient(settings, c.worker->rank - 1, store);
}

}  // namespace balancenet::federated

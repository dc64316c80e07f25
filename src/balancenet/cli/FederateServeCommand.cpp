// `balancenet federate serve`: its flags (federate's federated options, model, data, checkpoints, results, the
// job token), their checks, and the server over an EnrolledRoster.
#include "balancenet/cli/FederateServeCommand.h"

#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/CheckpointFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/ModelFlags.h"
#include "balancenet/cli/flags/ResultFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/HostAddress.h"
#include "balancenet/comm/admission/ClosedJob.h"
#include "balancenet/core/CpuAllowance.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/federated/process/EnrolledRoster.h"
#include "balancenet/federated/process/FederateProcess.h"
#include "balancenet/federated/process/FederatedServer.h"
#include "balancenet/federated/process/JoinClient.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/job/JobRendezvous.h"

namespace balancenet::cli {
namespace {

// The job's rendezvous options as every process maps them, for the store this process serves on --port.
comm::RendezvousOptions serveRendezvous(const ServeFlags& f) {
  job::JobConfig c = f.federate.config;
  c.launch.masterAddr = f.bind;
  c.launch.masterPort = f.port;
  comm::RendezvousOptions rv = job::rendezvousOptions(c);
  rv.hostStore = true;
  rv.worldSize = 0;  // clients come and go: no world size
  return rv;
}

}  // namespace

void addServeFlags(CLI::App& app, ServeFlags& f) {
  auto& c = f.federate.config;
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--port", f.port, "Serve the job's store on this TCP port (clients join at HOST:PORT)")->required();
  app.add_option("--bind", f.bind,
                 "The address clients reach this host at; a non-loopback one needs the job token (or "
                 "--insecure-open-job)")
      ->capture_default_str();
  app.add_option("--min-clients", f.minClients, "The first round waits for this many enrolled clients")
      ->capture_default_str();
  app.add_option("--join-timeout", f.joinTimeoutS, "Seconds to wait for --min-clients, then a one-line error")
      ->capture_default_str();
  app.add_option("--iface", c.launch.iface, "Network interface for Gloo (default: from --bind)");
  addFederatedOptions(app, f.federate);
  addModelFlags(app, c);
  addCheckpointFlags(app, c.checkpoint);
  addResultFlags(app, c, f.federate.raw.result);
  c.threads = 0;  // not given: what this host allows (validateServeFlags)
  addJobTokenFlags(app, c, f.federate.raw.host.jobTokenFile);
  // Launcher flags mean nothing to one server: its clients come over the network with their own data.
  for (const char* name : {"--clients", "--alpha", "--max-restarts", "--sync-bn"})
    app.remove_option(app.get_option(name));
  app.get_option("--data")->description("The server's evaluation data: its test split evaluates the global model");
  app.get_option("--threads")->description("Intra-op threads of the server (default: what this host allows)");
  app.footer(
      "Clients enrol with `balancenet federate join --server HOST:PORT --data ...`; they may come and go, and are "
      "admitted at round boundaries. See docs/federated.md.");
}

void validateServeFlags(ServeFlags& f) {
  auto& c = f.federate.config;
  validateFederatedOptions(f.federate);
  require(f.port >= 1 && f.port <= 65535, fmt::format("--port must be in 1..65535, got {}", f.port));
  require(f.minClients >= 1, fmt::format("--min-clients must be at least 1, got {}", f.minClients));
  require(f.joinTimeoutS > 0, fmt::format("--join-timeout must be positive, got {}", f.joinTimeoutS));
  settleJobToken(c, f.federate.raw.host.jobTokenFile);
  comm::requireClosedJob(serveRendezvous(f));
  validateModel(c);
  validateCheckpointFlags(c.checkpoint);
  if (c.threads == 0) c.threads = threadsPerWorker(readCpuAllowance().cores(), 1);
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  c.resilience.peerTimeout = fromSeconds(f.federate.peerTimeoutS);
  c.launch.rendezvousTimeout = fromSeconds(f.joinTimeoutS);
  c.federated = f.federate.options;
}

int runServe(ServeFlags& f) {
  auto& c = f.federate.config;
  validateServeFlags(f);
  job::settleLoggingAndOutputs(c, f.federate.raw.result.progressSeconds);
  announceJobToken(c);
  setIntraOpThreads(c.threads);
  std::filesystem::create_directories(c.trainer.runDir);
  const comm::RendezvousOptions rv = serveRendezvous(f);
  comm::StoreServer server(rv);
  comm::RendezvousOptions self = rv;  // the server's own view of its store, over loopback
  self.masterAddr = "127.0.0.1";
  self.hostStore = false;
  auto store = comm::connectJobStore(self);
  auto settings = federated::processSettings(c, rv);
  // Gloo listens on one interface and tells its address to each client: bound to every address, the server takes
  // its first network interface (--iface names another).
  if (rv.iface.empty() && f.bind == "0.0.0.0") settings.channel.iface = comm::primaryInterface();
  const auto served = federated::servedModelOf(c.model, f.federate.options.seed, f.federate.options.clientEvalFraction);
  federated::EnrolledRoster roster(store, settings, served, f.minClients);
  spdlog::info("federate serve: the job's store on port {}; clients join with --server <this host>:{}", f.port, f.port);
  return federated::runFederatedServer(settings, roster);
}

}  // namespace balancenet::cli

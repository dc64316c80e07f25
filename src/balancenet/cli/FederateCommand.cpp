// `balancenet federate`: its flags, their validation, the server's checkpoint check before launch, and the run.
#include "balancenet/cli/FederateCommand.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/LaunchChecks.h"
#include "balancenet/cli/flags/CheckpointFlags.h"
#include "balancenet/cli/flags/EmulationFlags.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/ModelFlags.h"
#include "balancenet/cli/flags/ResultFlags.h"
#include "balancenet/cli/flags/ServerOptFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/federated/LabelPartition.h"
#include "balancenet/federated/StrategyRegistry.h"
#include "balancenet/federated/process/ServerCheckpoint.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/launch/LocalLauncher.h"
#include "balancenet/launch/WorkerEnvironment.h"
#include "balancenet/worker/Worker.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// "N" or "LO:HI", 1 <= LO <= HI.
federated::LocalSteps parseLocalSteps(const std::string& text) {
  const std::string bad =
      fmt::format("--local-steps must be a number of steps N or a range LO:HI with 1 <= LO <= HI, got '{}'", text);
  auto number = [&](const std::string& part) {
    const auto n = parseInteger<int64_t>(part);
    require(n && *n >= 1, bad);
    return *n;
  };
  const auto colon = text.find(':');
  federated::LocalSteps steps;
  steps.low = number(text.substr(0, colon));
  steps.high = colon == std::string::npos ? steps.low : number(text.substr(colon + 1));
  require(steps.low <= steps.high, bad);
  return steps;
}

std::string strategiesHelp() { return fmt::format("{}", fmt::join(federated::strategyNames(), ", ")); }

}  // namespace

void addFederatedOptions(CLI::App& app, FederateFlags& f) {
  auto& o = f.options;
  app.add_option("--clients", o.clients, "Client processes, each with its own shard of the training set")
      ->capture_default_str();
  app.add_option("--rounds", o.rounds, "Rounds (fedbuff: server updates) to run")->capture_default_str();
  app.add_option("--time-budget-s", o.timeBudgetS, "Also stop after this much training wall time (0: rounds only)")
      ->capture_default_str();
  app.add_option("--strategy", o.strategy,
                 "How rounds are configured and updates aggregated: " + strategiesHelp() +
                     " (fedavg: fixed local steps, waits for all or drops those past --deadline-s; fedprox: fedavg "
                     "with --mu; fednova: updates normalised by local steps; fedbuff: asynchronous, a server step "
                     "every --buffer updates; balanced: from each client's measured speed, the same local steps with "
                     "a batch in proportion to its speed, so all finish together; FedNova aggregation)")
      ->capture_default_str();
  app.add_option("--alpha", f.alpha,
                 "Dirichlet concentration of each label over the clients: small (0.1) is very non-IID, large is "
                 "near-uniform; iid: a uniform random split")
      ->capture_default_str();
  app.add_option("--local-steps", f.localSteps,
                 "Local SGD steps per task: N, or LO:HI drawn per client and round (balanced without --deadline-s: "
                 "the round lasts as long as the median client needs for this many full batches)")
      ->capture_default_str();
  app.add_option("--local-batch", o.localBatch, "Samples per local step (balanced: the fastest client's)")
      ->capture_default_str();
  app.add_option("--fraction", o.fraction, "Share of the available clients sampled each round, in (0, 1]")
      ->capture_default_str();
  app.add_option("--deadline-s", o.deadlineS,
                 "A task's deadline: the client stops there and reports what it did (fedavg and fedprox leave such "
                 "partial work out; fednova and balanced use it); 0: wait for all")
      ->capture_default_str();
  app.add_option("--mu", o.mu, "FedProx's proximal weight: clients add mu/2 ||w - w_global||^2 to their loss")
      ->capture_default_str();
  app.add_option("--buffer", o.bufferSize, "fedbuff: aggregate every K updates")->capture_default_str();
  app.add_option("--server-lr", o.serverLr, "Step size of the aggregated update on the server")->capture_default_str();
  app.add_option("--lr", o.clientLr, "The clients' local SGD step size")->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the weights, the shards, client sampling, local batches, drawn steps")
      ->capture_default_str();
  app.add_option("--eval-every", o.evalEvery,
                 "Rounds between test evaluations on the server, which run beside the training: a round due while "
                 "the previous evaluation still runs is not evaluated (0: only the final model, which always is)")
      ->capture_default_str();
  app.add_option("--client-eval-fraction", o.clientEvalFraction,
                 "Federated evaluation: each client holds out this share of its shard (a draw from the seed; never "
                 "trained on) and evaluates the global model it receives on it before training; per-client rows "
                 "in client_eval.csv. 0: off; fedbuff: always off")
      ->capture_default_str();
  app.add_option("--client-eval-every", o.clientEvalEvery,
                 "Rounds between the clients' evaluations (and the last round; 0: the last only). A slow client's "
                 "evaluation holds up its round")
      ->capture_default_str();
  app.add_option("--peer-timeout", f.peerTimeoutS,
                 "Seconds past a task's deadline after which a silent client counts as dead (a killed one is noticed "
                 "at once)")
      ->capture_default_str();
  app.add_option("--max-restarts", f.config.resilience.maxRestarts,
                 "The launcher starts a dead client again this many times in all; it rejoins at a round boundary")
      ->capture_default_str();
  addServerOptFlags(app, f.options, f.serverOpt);  // federate and federate serve alike
}

// --alpha, --local-steps, --strategy and the numbers.
void validateFederatedOptions(FederateFlags& f) {
  auto& o = f.options;
  require(o.clients >= 1, fmt::format("--clients must be at least 1, got {}", o.clients));
  require(o.rounds >= 1, fmt::format("--rounds must be at least 1, got {}", o.rounds));
  require(o.timeBudgetS >= 0, fmt::format("--time-budget-s must not be negative, got {}", o.timeBudgetS));
  o.alpha = federated::parseAlpha(f.alpha);
  o.localSteps = parseLocalSteps(f.localSteps);
  // --strategy and the options strategies use (--fraction, --deadline-s, --mu, --buffer, --server-lr) are
  // checked where they are used, by the registry; the rest here.
  const bool asynchronous = federated::makeStrategy(o)->asynchronous();
  validateServerOptFlags(o, f.serverOpt);
  require(o.localBatch >= 1, fmt::format("--local-batch must be at least 1, got {}", o.localBatch));
  require(o.clientLr > 0, fmt::format("--lr must be positive, got {}", o.clientLr));
  require(o.evalEvery >= 0, fmt::format("--eval-every must not be negative, got {}", o.evalEvery));
  require(o.clientEvalFraction >= 0 && o.clientEvalFraction < 1,
          fmt::format("--client-eval-fraction must be at least 0 and below 1, got {}", o.clientEvalFraction));
  require(o.clientEvalEvery >= 0, fmt::format("--client-eval-every must not be negative, got {}", o.clientEvalEvery));
  if (asynchronous) o.clientEvalFraction = 0;  // its rows would mix model versions: no data held out for nothing
  require(f.peerTimeoutS > 0, fmt::format("--peer-timeout must be positive, got {}", f.peerTimeoutS));
  require(f.config.resilience.maxRestarts >= 0,
          fmt::format("--max-restarts must not be negative, got {}", f.config.resilience.maxRestarts));
}

namespace {

// One process more than clients: the server is rank 0.
void validateShape(FederateFlags& f) {
  auto& c = f.config;
  validateHosts(c, f.raw);
  const int world = f.options.clients + 1;
  if (c.launch.nnodes == 1)
    c.launch.nprocPerNode = world;
  else if (c.launch.hostWorkers.empty() && !c.worker)
    c.launch.assumedWorldFlags.emplace_back("--clients");  // a launcher of one count: checked at the hosts' meeting
  if (c.launch.nnodes > 1)
    require(c.launch.worldSize() == world,
            fmt::format("--nnodes {} with --nproc-per-node {} makes {} processes; they must be --clients {} + 1 (the "
                        "server is rank 0)",
                        c.launch.nnodes, f.raw.host.nprocPerNode, c.launch.worldSize(), f.options.clients));
  require(!c.worker || c.worker->worldSize == world,
          fmt::format("WORLD_SIZE {} is not --clients {} + 1", c.worker ? c.worker->worldSize : 0, f.options.clients));
}

}  // namespace

void addFederateFlags(CLI::App& app, FederateFlags& f) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  addFederatedOptions(app, f);
  addModelFlags(app, f.config);
  addEmulationFlags(app, f.raw.emulation);
  addHostFlags(app, f.config, f.raw.host);
  addCheckpointFlags(app, f.config.checkpoint);
  addResultFlags(app, f.config, f.raw.result);
  // The shared groups' flags that mean nothing here (--clients sets the processes; clients train alone) are not
  // offered; those that mean something else are retold.
  for (const char* name : {"--workers", "--sync-bn"}) app.remove_option(app.get_option(name));
  app.get_option("--nproc-per-node")->description("Processes per host (hosts x processes = --clients + 1)");
  app.get_option("--threads")->description("Intra-op threads of every process (server and clients)");
  app.get_option("--run-dir")
      ->description(
          "Where partition.csv, rounds.csv, client_eval.csv and summary.json go (default: runs/<time>-<pid>)");
  app.get_option("--checkpoint-dir")
      ->description(
          "The server saves its state here (global weights, round, speed estimates, records; atomic, "
          "checksummed) every --checkpoint-every rounds and at the end. Without --resume the directory "
          "must hold none");
  app.get_option("--checkpoint-every")->description("Rounds between checkpoints (with --checkpoint-dir)");
  app.get_option("--resume")
      ->description("Continue from the newest intact checkpoint in --checkpoint-dir; --rounds stays the total");
  app.get_option("--slowdown")->description("Emulation: client i's local steps last s_i x their real time (s_i >= 1)");
  app.get_option("--node-speed")
      ->description(
          "Emulation: client i's local step of b samples lasts at least b / v_i seconds (samples/s), e.g. "
          "100,100,50,50,25,25,12,12");
  app.get_option("--net-delay-ms")
      ->description(
          "Emulation: client i's link latency, added to every model message to or from it (ms), e.g. "
          "0,0,0,0,0,0,50,50");
  app.get_option("--net-bandwidth-mbps")
      ->description(
          "Emulation: client i's link speed in megabit/s (0: unlimited): each task and update takes at least "
          "delay + bytes x 8 / bandwidth, slept out by the client beside the real transfer, e.g. "
          "1000,1000,100,100,20,20,10,10");
  app.footer(
      "Defaults: 8 clients, the balanced strategy, alpha 0.5, 20 local steps of 32 samples at --lr 0.05, 100 "
      "rounds, the cnn model. --node-speed and --slowdown (their schedules count rounds), --net-delay-ms and "
      "--net-bandwidth-mbps take one value per client; --checkpoint-every counts rounds. Outputs in --run-dir: "
      "partition.csv, rounds.csv, client_eval.csv, summary.json (see docs/federated.md).");
}

void validateFederateFlags(FederateFlags& f) {
  auto& c = f.config;
  validateFederatedOptions(f);
  validateShape(f);
  settleJobToken(c, f.raw.host.jobTokenFile);
  validateModel(c);
  validateEmulation(c, f.raw.emulation, f.options.clients);  // one value per client
  validateCheckpointFlags(c.checkpoint);
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  c.resilience.peerTimeout = fromSeconds(f.peerTimeoutS);
  c.resilience.stallTimeout = c.launch.rendezvousTimeout;
  c.federated = f.options;
}

JobConfig parseFederateCommandLine(const std::vector<std::string>& args) {
  CLI::App app{"balancenet federate", "federate"};
  FederateFlags flags;
  addFederateFlags(app, flags);
  parseSubcommandWords(app, args);
  flags.config.argv = {"balancenet", "federate"};
  flags.config.argv.insert(flags.config.argv.end(), args.begin(), args.end());
  flags.config.worker = launch::readWorkerEnvironment(flags.config.launch);
  validateFederateFlags(flags);
  return flags.config;
}

void preflightFederatedCheckpoints(const JobConfig& c) {
  if (c.checkpoint.dir.empty()) return;
  const auto built = models::buildModel(c.model);
  federated::preflightServerCheckpoints(c.checkpoint.dir, c.checkpoint.keep, c.checkpoint.resume, *c.federated,
                                        c.model.name, *built.net);
}

int runFederate(FederateFlags& flags, int argc, char** argv) {
  auto& config = flags.config;
  config.argv.assign(argv, argv + argc);
  config.worker = launch::readWorkerEnvironment(config.launch);
  validateFederateFlags(flags);
  job::settleLoggingAndOutputs(config, flags.raw.result.progressSeconds);
  announceJobToken(config);
  if (config.worker) return worker::runWorker(config);
  const JobConfig checked = checkBeforeLaunch(config);  // the model sized for the data from here on
  if (checked.launch.nodeRank == 0) preflightFederatedCheckpoints(checked);
  return launch::launchLocalWorkers(checked);
}

}  // namespace balancenet::cli

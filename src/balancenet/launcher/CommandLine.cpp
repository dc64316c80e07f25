// CLI definition. Flag names follow torchrun where they overlap; --help is the reference for users.
#include "balancenet/launcher/CommandLine.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/FatalError.h"
#include "balancenet/core/Logging.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/launcher/CompareCommand.h"
#include "balancenet/launcher/JobConfig.h"
#include "balancenet/launcher/LocalLauncher.h"
#include "balancenet/launcher/ServerProcess.h"
#include "balancenet/launcher/Worker.h"
#include "balancenet/launcher/WorkerEnvironment.h"
#include "balancenet/launcher/YamlConfig.h"
#include "balancenet/models/ScriptedNetwork.h"
#include "balancenet/report/HtmlReport.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"

namespace balancenet::launcher {
namespace {

constexpr int kUnset = std::numeric_limits<int>::min();

struct RawFlags {
  int nodes = 0;
  int servers = kUnset, staleness = kUnset;
  std::string policy;
  std::string slowdown, slowdownSchedule, nodeSpeed, speedSchedule, netDelayMs, netBandwidthMbps;
  bool noOverlap = false;
  double rendezvousTimeoutS = 60;
  double stallTimeoutS = 0, peerTimeoutS = 30;
  std::string split;
  std::string joinStoreFile;
  std::string lrDecay = "constant";
  double progressSeconds = -1;
};

std::string defaultRunDir() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/{}-{}", stamp, ::getpid());
}

void addCheckpointFlags(CLI::App& app, CheckpointOptions& o) {
  app.add_option("--checkpoint-dir", o.dir,
                 "Save checkpoints here (model, optimiser, data position, RNG, split; atomic, checksummed): every "
                 "--checkpoint-every steps and after the last step. Without --resume the directory must hold none");
  app.add_option("--checkpoint-every", o.every, "Steps between checkpoints (with --checkpoint-dir)")
      ->capture_default_str();
  app.add_option("--keep-checkpoints", o.keep, "Newest checkpoints kept in --checkpoint-dir; older ones are removed")
      ->capture_default_str();
  app.add_flag("--resume", o.resume,
               "Continue from the newest intact checkpoint in --checkpoint-dir (a damaged one is skipped with a "
               "warning); --steps stays the total, so the remaining steps are trained");
}

void addTrainFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  auto& t = c.trainer;
  // A flag given twice takes its last value, so wrappers and scripts can override defaults.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // Defaults are recorded so --print-config shows every value in effect, not only those given.
  app.option_defaults()->always_capture_default();
  app.add_option("--nodes", raw.nodes, "Workers to run on this machine (same as --nproc-per-node with --nnodes 1)");
  app.add_option("--nnodes", c.launch.nnodes, "Machines in the job")->check(CLI::PositiveNumber);
  app.add_option("--node-rank", c.launch.nodeRank, "This machine's index in [0, nnodes)")->check(CLI::NonNegativeNumber);
  app.add_option("--nproc-per-node", c.launch.nprocPerNode, "Workers per machine")->check(CLI::PositiveNumber);
  app.add_option("--master-addr", c.launch.masterAddr, "Address of node 0, where the rendezvous store listens")
      ->capture_default_str();
  app.add_option("--master-port", c.launch.masterPort, "Store port; 0 picks a free one (single machine only)")
      ->check(CLI::Range(0, 65535))->capture_default_str();
  app.add_option("--rendezvous-timeout", raw.rendezvousTimeoutS,
                 "Seconds to wait for all workers to arrive, and for any collective, before failing")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--iface", c.launch.iface, "Network interface for Gloo (default: loopback for a local job)");
  auto& r = c.resilience;
  app.add_option("--stall-timeout", raw.stallTimeoutS,
                 "Watchdog: seconds a collective may wait for its peers; then every rank names the missing ranks "
                 "and their last step, and the job stops instead of hanging (default: --rendezvous-timeout)");
  app.add_flag("--elastic", r.elastic,
               "Survive dead workers: the others notice within --peer-timeout, re-form the group without them, "
               "take the newest committed state from a survivor and go on with the global batch split over "
               "fewer workers; new workers (--max-restarts, --join) are admitted at the next step boundary");
  app.add_option("--min-nodes", r.minNodes, "With --elastic: stop the job when fewer workers remain")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-nodes", r.maxNodes,
                 "With --elastic: admit joiners up to this many workers (default: the launched number)");
  app.add_option("--peer-timeout", raw.peerTimeoutS,
                 "With --elastic: seconds a collective waits for a silent (stopped, unreachable) peer before it "
                 "is dropped; a killed peer is noticed at once")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-restarts", r.maxRestarts,
                 "With --elastic: the launcher starts a dead worker again this many times in all; it rejoins at "
                 "the next step boundary and receives the state from a peer")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_flag("--join", r.join,
               "Join a running --elastic job as one more worker (give the job's flags): a single-machine job "
               "through --store-file, a job over several machines at --master-addr:--master-port; it trains "
               "from the next step boundary on and ends with the job");
  app.add_option("--store-file", raw.joinStoreFile,
                 "With --join: the private store file of a single-machine --elastic job (its launcher prints it "
                 "and writes it to RUN_DIR/join-store)");
  app.add_option("--job-token", c.launch.jobToken,
                 "Shared secret of a job over several machines: only processes given the same token join it (a "
                 "wrong one is refused at once). Prefer the environment variable BALANCENET_JOB_TOKEN: command "
                 "lines are visible to every user of a machine. A single-machine job needs none: its store is a "
                 "private file. See docs/reliability.md")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
                             "TOKEN"));

  app.add_option("--model", c.model.name,
                 "cnn, mlp, alexnet, vgg16, resnet18, resnet50 (see 'balancenet models'), or a TorchScript file "
                 "(*.pt, from torch.jit.script/trace) mapping [N,1,28,28] images to [N,10] logits")
      ->capture_default_str();
  app.add_option("--width", c.model.width, "Scale channels and hidden sizes (big models on few cores)")
      ->capture_default_str();
  app.add_option("--dropout", c.model.dropout, "Dropout probability; <0 keeps the model's default, 0 disables");
  app.add_flag("--sync-bn", c.syncBatchNorm, "BatchNorm statistics over the whole global batch (exact for unequal splits)");
  app.add_option("--data-dir", c.dataDir, "Any MNIST-format directory (IDX files, plain or .gz)")->capture_default_str();

  app.add_option("--global-batch", t.globalBatch, "Samples per step over all workers")->capture_default_str();
  app.add_option("--split", raw.split, "Samples per worker, comma separated, summing to --global-batch (default: equal)");
  app.add_option("--policy", raw.policy,
                 "How the global batch is split: balanced (default), proportional, bno (the paper's formula), "
                 "equal, random, static (--split; the default when --split is given)");
  app.add_option("--rebalance-every", c.orchestration.rebalanceEvery, "Steps between split decisions")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_flag("--bno-normalize", c.orchestration.bnoNormalize,
               "Rescale the bno policy's batch sizes to sum to --global-batch");
  app.add_option("--slowdown", raw.slowdown,
                 "Emulation: node i sleeps (s_i - 1) x its real compute time each step, e.g. 1,1,1,4");
  app.add_option("--slowdown-schedule", raw.slowdownSchedule, "Changes of --slowdown, e.g. '100=1,1,1,8;200=1,1,1,4'");
  app.add_option("--node-speed", raw.nodeSpeed,
                 "Emulation: node i's compute lasts at least b_i / v_i seconds (samples/s), e.g. 100,100,100,25");
  app.add_option("--speed-schedule", raw.speedSchedule, "Changes of --node-speed, e.g. '100=100,100,100,25;200=100,100,100,100'");
  app.add_option("--net-delay-ms", raw.netDelayMs,
                 "Emulation: per-node link latency added to every message, e.g. 0,0,0,5 (messages pay the largest)");
  app.add_option("--net-bandwidth-mbps", raw.netBandwidthMbps,
                 "Emulation: per-node link speed in megabit/s, e.g. 1000,1000,1000,100 (0: unlimited; messages go at "
                 "the smallest)");
  app.add_option("--comm", c.comm.mode,
                 "How gradients travel: allreduce (buckets overlapped with backward), flat (one all-reduce after "
                 "backward), sfb (fully connected layers send sufficient factors, the rest all-reduce), hybrid (per "
                 "fully connected layer, whichever moves fewer bytes for the current split), ps (parameter servers, "
                 "see --ps and --staleness)")
      ->capture_default_str();
  app.add_option("--ps", raw.servers,
                 "With --comm ps: parameter server processes to start beside the workers; each holds an equal share "
                 "of the parameters and runs the optimiser on it");
  app.add_option("--staleness", raw.staleness,
                 "With --comm ps: 0 (default) is BSP, exactly the all-reduce's training; s > 0 is SSP: a worker may "
                 "run up to s steps ahead of the slowest (needs a fixed split: --policy equal or static)");
  app.add_option("--bucket-mb", c.comm.bucketMb, "All-reduce bucket size in MB (the first bucket is 1 MB, as in DDP)")
      ->capture_default_str();
  app.add_flag("--no-overlap", raw.noOverlap, "Send the buckets after backward instead of during it (for comparison)");
  app.add_flag("--explain-comm", c.comm.explain, "Print how each layer's gradient is synchronised, at start");
  app.add_option("--timeline", c.trainer.timelinePath,
                 "Write a Chrome trace of every rank's forward, backward, messages and waits (chrome://tracing, "
                 "ui.perfetto.dev)");
  app.add_option("--steps", t.steps, "Training steps (weight updates)")->capture_default_str();
  app.add_option("--seed", t.seed, "Seed for weights and data order")->capture_default_str();

  app.add_option("--optimizer", t.optimizer.name, "sgd or adam")->capture_default_str();
  app.add_option("--lr", t.lr.baseLr, "Learning rate")->capture_default_str();
  app.add_option("--momentum", t.optimizer.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--weight-decay", t.optimizer.weightDecay, "L2 weight decay")->capture_default_str();
  app.add_flag("--nesterov", t.optimizer.nesterov, "Nesterov momentum (SGD)");
  app.add_option("--warmup-steps", t.lr.warmupSteps, "Linear learning-rate warm-up")->capture_default_str();
  app.add_option("--lr-decay", raw.lrDecay, "constant, cosine (to --lr-min at the last step) or step")
      ->capture_default_str();
  app.add_option("--lr-min", t.lr.minLr, "Final learning rate of the cosine decay")->capture_default_str();
  app.add_option("--lr-step-every", t.lr.stepEvery, "Step decay period in steps")->capture_default_str();
  app.add_option("--lr-gamma", t.lr.gamma, "Step decay factor")->capture_default_str();

  app.add_option("--eval-every", t.evalEvery, "Evaluate test accuracy every N steps (0: only at the end)")
      ->capture_default_str();
  app.add_option("--threads", c.threads, "Intra-op threads per worker (default: cores / local workers)");
  app.add_option("--run-dir", t.runDir, "Where steps.csv and summary.json go (default: runs/<time>-<pid>)");
  app.add_option("--progress-seconds", raw.progressSeconds,
                 "Seconds between progress lines (default: 2 on a terminal, 10 otherwise; 0: none)");
  app.add_option("--save-params", c.saveParams, "Write the final parameters here (torch::save), atomically");
  app.add_option("--export", c.exportPath,
                 "Write the trained state_dict here for PyTorch: model.load_state_dict(torch.load(FILE)) (atomic)");
  app.add_option("--log-level", c.logLevel, "trace, debug, info, warn, error")->capture_default_str();
  addCheckpointFlags(app, c.checkpoint);
}

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

// --comm ps, --ps, --staleness; runs after the split and the policy are settled.
void validateParameterServers(JobConfig& c, const RawFlags& raw) {
  auto& p = c.comm;
  if (p.mode != "ps") {
    require(raw.servers == kUnset, fmt::format("--ps is for --comm ps (got --comm {})", p.mode));
    require(raw.staleness == kUnset, fmt::format("--staleness is for --comm ps (got --comm {})", p.mode));
    return;
  }
  require(raw.servers != kUnset, "--comm ps needs --ps K, the number of parameter servers (K >= 1)");
  require(raw.servers >= 1, fmt::format("--ps must be at least 1 with --comm ps, got {}", raw.servers));
  p.servers = raw.servers;
  p.staleness = raw.staleness == kUnset ? 0 : raw.staleness;
  require(p.staleness >= 0, fmt::format("--staleness must not be negative, got {}", p.staleness));
  require(!c.worker || c.worker->storeHostedByLauncher,
          "--comm ps needs the balancenet launcher, which starts the servers: run 'balancenet train' without RANK set");
  require(!c.server || *c.server < p.servers,
          fmt::format("parameter server {} does not exist with --ps {}", c.server.value_or(0), p.servers));
  if (p.staleness == 0) return;
  const auto& policy = c.orchestration.policy;
  // The orchestrator's periodic gather and synchronised BatchNorm are barriers among the workers.
  require(policy == "equal" || policy == "static",
          fmt::format("--staleness {} (SSP) needs a fixed split: --policy equal or static, not --policy {}",
                      p.staleness, policy));
  require(!c.syncBatchNorm, "--sync-bn synchronises every forward pass, which --staleness > 0 (SSP) must not");
  if (policy == "equal") c.split = Split::equal(c.trainer.globalBatch, c.split.worldSize());
}

std::chrono::milliseconds fromSeconds(double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); }

// --elastic and friends, --stall-timeout, --join.
void validateResilience(JobConfig& c, const RawFlags& raw) {
  auto& r = c.resilience;
  require(raw.stallTimeoutS >= 0, fmt::format("--stall-timeout must be positive, got {}", raw.stallTimeoutS));
  r.stallTimeout = raw.stallTimeoutS > 0 ? fromSeconds(raw.stallTimeoutS) : c.launch.rendezvousTimeout;
  r.peerTimeout = fromSeconds(raw.peerTimeoutS);
  const int world = c.worker ? c.worker->worldSize : c.launch.worldSize();
  if (r.maxNodes == 0) r.maxNodes = world;
  require(raw.joinStoreFile.empty() || r.join, "--store-file is only for --join (a launcher makes its job's own)");
  if (!raw.joinStoreFile.empty()) {
    // FileStore would create a missing file and wait there for a job that never comes.
    std::error_code ec;
    require(std::filesystem::is_regular_file(raw.joinStoreFile, ec),
            fmt::format("--store-file {}: no such file (is the job running? its launcher writes the path to "
                        "RUN_DIR/join-store)",
                        raw.joinStoreFile));
    c.launch.storeFile = raw.joinStoreFile;
  }
  if (!r.elastic) {
    require(!r.join, "--join needs --elastic (a fixed job admits nobody)");
    require(r.maxRestarts == 0, "--max-restarts needs --elastic (a fixed job cannot take a worker back)");
    return;
  }
  require(r.minNodes <= world, fmt::format("--min-nodes {} is more than the {} workers launched", r.minNodes, world));
  require(r.maxNodes >= world, fmt::format("--max-nodes {} is fewer than the {} workers launched", r.maxNodes, world));
  require(r.maxNodes <= c.trainer.globalBatch,
          fmt::format("--max-nodes {} is more than --global-batch {} (every worker needs at least one sample)",
                      r.maxNodes, c.trainer.globalBatch));
  require(c.comm.mode == "allreduce" || c.comm.mode == "flat",
          fmt::format("--elastic works with --comm allreduce or flat, not --comm {}", c.comm.mode));
  require(!c.worker || c.worker->storeHostedByLauncher || r.join,
          "--elastic needs a store that outlives every worker: run 'balancenet train' without RANK set (the launcher "
          "hosts it)");
  require(!r.join || c.launch.masterPort != 0 || !c.launch.storeFile.empty(),
          "--join needs the running job's --store-file (one machine) or --master-port and --master-addr (several)");
  if (r.join && !c.worker) {
    c.worker = WorkerIdentity{};
    c.worker->rank = -1;  // a new member id comes from the job's store
    c.worker->worldSize = world;
    c.worker->storeHostedByLauncher = true;
    c.worker->joining = true;
  }
}

void validate(JobConfig& c, const RawFlags& raw) {
  auto& l = c.launch;
  if (raw.nodes != 0) {
    require(raw.nodes > 0, fmt::format("--nodes must be at least 1, got {}", raw.nodes));
    require(l.nnodes == 1, "--nodes is for one machine; with --nnodes use --nproc-per-node");
    l.nprocPerNode = raw.nodes;
  }
  require(l.nodeRank < l.nnodes, fmt::format("--node-rank {} must be below --nnodes {}", l.nodeRank, l.nnodes));
  require(l.nnodes == 1 || c.worker || l.masterPort != 0,
                      "a job over several machines needs --master-port (and --master-addr) known to all of them");
  l.rendezvousTimeout = std::chrono::milliseconds(static_cast<int64_t>(raw.rendezvousTimeoutS * 1000));
  validateResilience(c, raw);
  const int world = c.worker ? c.worker->worldSize : l.worldSize();
  // SSP needs a fixed split (see validateParameterServers): the default policy follows.
  const bool stale = raw.staleness != kUnset && raw.staleness > 0;

  auto names = models::modelNames();
  if (models::isScriptedModelPath(c.model.name)) {
    require(!c.syncBatchNorm, "--sync-bn needs a zoo model: a TorchScript model's BatchNorm layers cannot be replaced");
    models::ScriptedNetwork check(c.model.name);  // a bad file is one error here, not one per worker
  } else if (std::find(names.begin(), names.end(), c.model.name) == names.end()) {
    throw UsageError(fmt::format("unknown --model '{}'; choose one of: {} (or a TorchScript file, *.pt)", c.model.name,
                                 fmt::join(names, ", ")));
  }
  require(c.model.width > 0, fmt::format("--width must be positive, got {}", c.model.width));
  require(c.model.dropout < 1, fmt::format("--dropout must be below 1, got {}", c.model.dropout));
  auto& t = c.trainer;
  require(t.steps > 0, fmt::format("--steps must be at least 1, got {}", t.steps));
  require(t.globalBatch >= world,
                      fmt::format("--global-batch {} is smaller than the {} workers: each needs at least 1 sample",
                                  t.globalBatch, world));
  c.split = raw.split.empty() ? Split::equal(t.globalBatch, world) : Split::parse(raw.split, world, t.globalBatch);
  auto& o = c.orchestration;
  o.policy = !raw.policy.empty() ? raw.policy : (raw.split.empty() ? (stale ? "equal" : "balanced") : "static");
  auto policies = orchestrator::policyNames();
  if (std::find(policies.begin(), policies.end(), o.policy) == policies.end())
    throw UsageError(fmt::format("unknown --policy '{}'; choose one of: {}", o.policy, fmt::join(policies, ", ")));
  auto& e = c.emulation;
  e.slowdown = emulation::FactorSchedule::parse("--slowdown", raw.slowdown, "--slowdown-schedule", raw.slowdownSchedule, world);
  e.nodeSpeed = emulation::FactorSchedule::parse("--node-speed", raw.nodeSpeed, "--speed-schedule", raw.speedSchedule, world);
  require(e.slowdown.empty() || e.nodeSpeed.empty(), "--slowdown and --node-speed exclude each other");
  if (!raw.netDelayMs.empty())
    e.netDelayMs = emulation::FactorSchedule::perNode("--net-delay-ms", raw.netDelayMs, world, /*allowZero=*/true);
  if (!raw.netBandwidthMbps.empty())
    e.netBandwidthMbps =
        emulation::FactorSchedule::perNode("--net-bandwidth-mbps", raw.netBandwidthMbps, world, /*allowZero=*/true);
  const std::vector<std::string> commModes{"allreduce", "flat", "sfb", "hybrid", "ps"};
  require(std::find(commModes.begin(), commModes.end(), c.comm.mode) != commModes.end(),
          fmt::format("unknown --comm '{}'; choose one of: {}", c.comm.mode, fmt::join(commModes, ", ")));
  validateParameterServers(c, raw);
  require(c.comm.bucketMb > 0, fmt::format("--bucket-mb must be positive, got {}", c.comm.bucketMb));
  c.comm.overlap = !raw.noOverlap;
  require(t.lr.baseLr > 0, fmt::format("--lr must be positive, got {}", t.lr.baseLr));
  require(t.lr.warmupSteps >= 0, "--warmup-steps must not be negative");
  require(t.evalEvery >= 0, "--eval-every must not be negative");
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  require(t.optimizer.name == "sgd" || t.optimizer.name == "adam",
                      fmt::format("--optimizer must be sgd or adam, got '{}'", t.optimizer.name));
  t.lr.decay = trainer::LrSchedule::parseDecay(raw.lrDecay);
  t.lr.totalSteps = t.steps;
  t.modelName = c.model.name;
}

// Checkpoint flags, after validate(): their values and the combinations that cannot work.
// (--checkpoint-every and --keep-checkpoints alone are harmless defaults, as --print-config writes them.)
void validateCheckpoints(const JobConfig& c) {
  const auto& o = c.checkpoint;
  if (o.dir.empty()) return require(!o.resume, "--resume needs --checkpoint-dir");
  require(o.every >= 1, fmt::format("--checkpoint-every must be at least 1, got {}", o.every));
  require(o.keep >= 1, fmt::format("--keep-checkpoints must be at least 1, got {}", o.keep));
  // The parameter servers own the weights and the optimiser state there; their shards are not saved.
  require(c.comm.mode != "ps", "--checkpoint-dir does not work with --comm ps (the servers' shards are not saved)");
}

int runModelsCommand() {
  std::cout << fmt::format("{:<10} {:>14} {:>16} {:>16}  {}\n", "model", "parameters", "MFLOPs/sample", "train MB/sample",
                           "batch norm");
  for (const auto& name : models::modelNames()) {
    models::ModelOptions o;
    o.name = name;
    auto info = models::buildModel(o).info;
    std::cout << fmt::format("{:<10} {:>14} {:>16.2f} {:>16.2f}  {}\n", name, info.parameters, info.flopsPerSample / 1e6,
                             info.memoryPerSampleBytes / 1e6, info.hasBatchNorm ? "yes" : "no");
  }
  std::cout << "(forward FLOPs per 28x28x1 sample at --width 1; training costs about 3x)\n";
  return 0;
}

}  // namespace

int runCommandLine(int argc, char** argv) {
  installFatalErrorHandler();  // even an exception on a library's thread ends as one line, not a core dump
  CLI::App app{
      "balancenet: data-parallel training on heterogeneous clusters, with a per-node share of every global batch.\n"
      "Example: balancenet train --nodes 4 --model cnn --global-batch 256 --split 100,100,40,16"};
  app.set_version_flag("--version", "balancenet 0.1.0");
  app.require_subcommand(1);
  JobConfig config;
  config.dataDir = data::kDefaultDataDir;
  config.model.name = "cnn";
  config.trainer.lr.baseLr = 0.05;
  RawFlags raw;
  auto* train = app.add_subcommand("train", "Train a model data-parallel (spawns --nodes local workers)");
  addTrainFlags(*train, config, raw);
  bool printConfig = false;
  std::string configPath;  // read by expandConfigFile before parsing; declared for --help
  train->add_flag("--print-config", printConfig, "Print the effective configuration as YAML (usable as --config) and exit");
  train->add_option("--config", configPath,
                    "YAML file with any of these flags as keys, names without '--' (e.g. 'global-batch: 256', "
                    "'split: [100, 28]', 'sync-bn: true'); flags on the command line override it");
  app.add_subcommand("models", "List the model zoo with parameter counts and FLOPs per sample");
  std::vector<std::string> reportRuns;
  std::string reportOut = "report.html";
  auto* report = app.add_subcommand("report", "One HTML page (tables and charts) for one or more run directories");
  report->add_option("runs", reportRuns, "Run directories (each with summary.json and steps.csv)")->required();
  report->add_option("--out", reportOut, "The page to write (self-contained: open it in any browser)")
      ->capture_default_str();
  CompareOptions compareOptions;
  auto* compare = app.add_subcommand("compare", "Run one scenario with several policies and models; table and charts");
  addCompareFlags(*compare, compareOptions);

  try {
    auto args = expandConfigFile(std::vector<std::string>(argv, argv + argc), *train);
    std::vector<const char*> expanded;
    for (const auto& a : args) expanded.push_back(a.c_str());
    app.parse(static_cast<int>(expanded.size()), expanded.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "balancenet: error: " << firstLine(e.what()) << " (see --help)" << std::endl;
    return 2;
  }

  try {
    if (app.got_subcommand("models")) return runModelsCommand();
    if (app.got_subcommand("report")) {
      report::writeHtmlReport(reportRuns, reportOut);
      std::cerr << "balancenet: report written to " << reportOut << std::endl;
      return 0;
    }
    if (app.got_subcommand("compare")) {
      setupLogging("info");
      compareOptions.trainFlags = compare->remaining();
      return runCompare(compareOptions, "/proc/self/exe");
    }
    config.argv.assign(argv, argv + argc);
    config.worker = readWorkerEnvironment(config.launch);
    config.server = readServerEnvironment();
    validate(config, raw);
    validateCheckpoints(config);
    if (printConfig) {
      std::cout << effectiveConfigYaml(*train) << std::flush;
      return 0;
    }
    setupLogging(config.logLevel);
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    config.trainer.progressSeconds = raw.progressSeconds >= 0 ? raw.progressSeconds : (tty ? 2 : 10);
    if (config.trainer.runDir.empty()) config.trainer.runDir = defaultRunDir();
    if (config.server) return runParameterServer(config);
    if (config.worker) {
      if (!train->count("--threads"))
        config.threads = std::max(1u, std::thread::hardware_concurrency() / std::max(1, config.launch.nprocPerNode));
      return runWorker(config);
    }
    return launchLocalWorkers(config);
  } catch (const UsageError& e) {
    std::cerr << "balancenet: error: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "balancenet: error: " << firstLine(e.what()) << std::endl;
    return 1;
  }
}

}  // namespace balancenet::launcher

// The flags of `balancenet train`: names follow torchrun where they overlap; --help is the reference for users.
#include "balancenet/cli/TrainFlags.h"

#include "balancenet/cli/JobTokenFlags.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/DataFlags.h"
#include "balancenet/cli/JobTokenFlags.h"
#include "balancenet/cli/YamlConfig.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Error.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::cli {
using job::CheckpointOptions;
using job::JobConfig;
namespace {

// "allreduce (buckets overlapped with backward), flat (...), ..." from the registry.
std::string commModesHelp() {
  std::vector<std::string> items;
  for (const auto& m : comm::commModes()) items.push_back(fmt::format("{} ({})", m.name, m.help));
  return fmt::format("{}", fmt::join(items, ", "));
}

// The environment variables, listed under --help from their table.
std::string environmentHelp() {
  std::string text = "Environment variables:";
  for (const auto& v : environmentVariables()) text += fmt::format("\n  {:<24} {}", v.name, v.meaning);
  return text;
}

}  // namespace

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

// Who runs where: workers, hosts, the store.
void addLaunchFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  // Words: a worker is one training process (a rank), a host is a machine, a member is a worker of an
  // elastic generation. --nodes, --min-nodes, --max-nodes are the older spellings of the worker flags;
  // --nnodes and --node-rank are torchrun's spellings and count hosts.
  app.add_option("--workers,--nodes", raw.workers,
                 "Workers (training processes) to run on this host (same as --nproc-per-node with --nnodes 1; "
                 "--nodes is an alias)")
      ->default_str("");  // unset unless given: --print-config leaves it out
  app.add_option("--nnodes,--hosts", c.launch.nnodes,
                 "Hosts (machines) in the job (torchrun's spelling; alias --hosts)")
      ->check(CLI::PositiveNumber);
  app.add_option("--node-rank,--host-rank", c.launch.nodeRank,
                 "This host's index in [0, --nnodes) (torchrun's spelling; alias --host-rank)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--nproc-per-node", raw.nprocPerNode,
                 "Workers on this host (hosts may differ: they meet and agree on the ranks), or every host's count "
                 "by node rank (2,1), which flags checked against the world size need when hosts differ")
      ->capture_default_str();
  app.add_option("--master-addr", c.launch.masterAddr, "Address of host 0, where the rendezvous store listens")
      ->capture_default_str();
  app.add_option("--master-port", c.launch.masterPort, "Store port; 0 picks a free one (single-host jobs only)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--rendezvous-timeout", raw.rendezvousTimeoutS,
                 "Seconds to wait for all workers to arrive, and for any collective, before failing")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--iface", c.launch.iface, "Network interface for Gloo (default: loopback for a local job)");
  app.add_flag("--force", c.launch.force,
               "Start this host's processes even when their estimated memory exceeds what the host has available");
  addJobTokenFlags(app, c, raw.jobTokenFile);
}

// Surviving dead and stalled workers, joining a running job.
void addResilienceFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  auto& r = c.resilience;
  app.add_option("--stall-timeout", raw.stallTimeoutS,
                 "Watchdog: seconds a collective may wait for its peers; then every rank names the missing ranks "
                 "and their last step, and the job stops instead of hanging (0, the default: --rendezvous-timeout)");
  app.add_flag("--elastic", r.elastic,
               "Survive dead workers: the others notice within --peer-timeout, re-form the group without them, "
               "take the newest committed state from a survivor and go on with the global batch split over "
               "fewer workers; new workers (--max-restarts, --join) are admitted at the next step boundary");
  app.add_option("--min-workers,--min-nodes", r.minNodes,
                 "With --elastic: stop the job when fewer workers remain (--min-nodes is an alias)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-workers,--max-nodes", r.maxNodes,
                 "With --elastic: admit joiners up to this many workers (default: the launched number; --max-nodes "
                 "is an alias)");
  app.add_option("--peer-timeout", raw.peerTimeoutS,
                 "With --elastic: seconds a collective waits for a silent (stopped, unreachable) peer before it "
                 "is dropped; a killed peer is noticed at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-restarts", r.maxRestarts,
                 "With --elastic: the launcher starts a dead worker again this many times in all; it rejoins at "
                 "the next step boundary and receives the state from a peer")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--join", r.join,
               "Join a running --elastic job as one more worker (give the job's flags): a single-host job "
               "through --store-file, a job over several hosts at --master-addr:--master-port; it trains "
               "from the next step boundary on and ends with the job");
  app.add_option("--store-file", raw.joinStoreFile,
                 "With --join: the private store file of a single-host --elastic job (its launcher prints it "
                 "and writes it to RUN_DIR/join-store)");
}

void addModelFlags(CLI::App& app, JobConfig& c) {
  app.add_option("--model", c.model.name,
                 "cnn, mlp, alexnet, vgg16, resnet18, resnet50, gpt (see 'balancenet models'), or a TorchScript file "
                 "(*.pt, from torch.jit.script/trace) mapping the data's samples (e.g. [N,1,28,28] images, [N,T] "
                 "int64 tokens) to [N,classes] logits ([N,T,vocabulary] for tokens)")
      ->capture_default_str();
  app.add_option("--width", c.model.width, "Scale channels and hidden sizes (big models on few cores)")
      ->capture_default_str();
  app.add_option("--dropout", c.model.dropout, "Dropout probability; <0 keeps the model's default, 0 disables");
  app.add_flag("--sync-bn", c.syncBatchNorm,
               "BatchNorm statistics over the whole global batch (exact for unequal splits)");
  app.add_option("--layers", c.model.layers, "gpt: transformer blocks")->capture_default_str();
  app.add_option("--heads", c.model.heads, "gpt: attention heads (--embed a multiple of it)")->capture_default_str();
  app.add_option("--embed", c.model.embed, "gpt: embedding width")->capture_default_str();
  addDataFlags(app, c);
}

// How the global batch is split over the workers (train declares --global-batch with its run flags: a launched
// program's data loader has its own).
void addAllocationFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  app.add_option("--split", raw.split,
                 "Samples per worker, comma separated, summing to --global-batch (default: equal)");
  app.add_option("--policy", raw.policy,
                 "How the global batch is split: balanced (default), proportional, bno (the paper's formula), "
                 "equal, random, static (--split; the default when --split is given)");
  app.add_option("--rebalance-every", c.orchestration.rebalanceEvery, "Steps between split decisions")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--rebalance-budget", c.orchestration.rebalanceBudget,
                 "Double the rebalance period while one rebalance (metrics gather, decision, broadcast) costs more "
                 "than this share of the steps between two (e.g. 0.01 at thousands of workers); 0: fixed period")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--probe-peers", c.orchestration.probePeers,
                 "Probe the latency to k peers per worker (ring neighbours and seeded random ones) instead of all "
                 "pairs: O(N k) probes and O(k) metrics per worker; 0: all pairs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--bno-normalize", c.orchestration.bnoNormalize,
               "Rescale the bno policy's batch sizes to sum to --global-batch");
}

namespace {

// Pipeline parallelism: the model cut into stages, each share of the batch into micro-batches.
void addPipelineFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  auto& p = c.pipeline;
  app.add_option("--pipeline-stages", raw.pipelineStages,
                 "Cut the model into this many stages, each on its own worker: the workers form --nodes / stages "
                 "pipelines, each taking one share of the global batch (--split then has one value per pipeline); "
                 "1 is data parallelism; auto: the launcher profiles the model, ranks every shape (data "
                 "parallelism, pipelines, stages with replicas) by predicted step time and runs the best (see "
                 "docs/pipeline.md)")
      ->capture_default_str();
  app.add_option("--micro-batches", raw.microBatches,
                 "With --pipeline-stages: micro-batches each pipeline's share is cut into per step (default: 4 x "
                 "stages); more shrink the idle bubble and the activations a micro-batch holds")
      ->default_str("");  // unset unless given: the default follows --pipeline-stages
  app.add_option("--schedule", p.schedule,
                 "With --pipeline-stages: gpipe (all forwards, then all backwards: a stage holds every micro-batch's "
                 "activations) or 1f1b (one forward, one backward: stage s holds at most stages - s)")
      ->capture_default_str();
  app.add_option("--partition", p.partition,
                 "With --pipeline-stages: the blocks each stage runs: uniform (equal block counts), flops (equal "
                 "forward FLOPs, as if every worker were the same), auto (each worker profiles every block on its "
                 "own CPU; the cut, the order of workers along the pipeline and the shares are planned from those "
                 "times, the links and the memory caps, and the cut moves while training when the measured stage "
                 "times say so) or inclusive block ranges, one per stage, e.g. 0-9,10-17 (see 'balancenet models "
                 "--blocks MODEL')")
      ->capture_default_str();
  app.add_flag("--explain-partition", p.explainPartition,
               "With --pipeline-stages: worker 0 prints each block's measured cost on each worker and the placement "
               "with every stage's predicted time, at start");
  app.add_flag("--keep-partition", p.keepPartition,
               "With --partition auto: plan once and never move the cut (the decisions are still logged)");
  app.add_option("--memory-limit-mb", raw.memoryLimitMb,
                 "Emulated memory cap in MB of 2^20 bytes: one value for every worker, or one per worker (e.g. "
                 "0,0,0,200: one small node); a placement whose estimated memory (parameters, gradients, optimiser "
                 "state, activations) exceeds some worker's cap is refused before training; with --partition auto "
                 "the planner only considers placements that fit (0: none)")
      ->capture_default_str();
}

}  // namespace

void addEmulationFlags(CLI::App& app, RawFlags& raw) {
  app.add_option("--slowdown", raw.slowdown,
                 "Emulation: worker i sleeps (s_i - 1) x its real compute time each step (s_i >= 1), e.g. 1,1,1,4");
  app.add_option("--slowdown-schedule", raw.slowdownSchedule, "Changes of --slowdown, e.g. '100=1,1,1,8;200=1,1,1,4'");
  app.add_option("--node-speed", raw.nodeSpeed,
                 "Emulation: worker i's compute lasts at least b_i / v_i seconds (samples/s), e.g. 100,100,100,25");
  app.add_option("--speed-schedule", raw.speedSchedule,
                 "Changes of --node-speed, e.g. '100=100,100,100,25;200=100,100,100,100'");
  app.add_option("--net-delay-ms", raw.netDelayMs,
                 "Emulation: per-worker link latency added to every message, e.g. 0,0,0,5 (messages pay the largest)");
  app.add_option("--net-bandwidth-mbps", raw.netBandwidthMbps,
                 "Emulation: per-worker link speed in megabit/s, e.g. 1000,1000,1000,100 (0: unlimited; messages go at "
                 "the smallest)");
}

namespace {

// How gradients travel.
void addCommFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  app.add_option("--comm", raw.comm, "How gradients travel: " + commModesHelp())->capture_default_str();
  app.add_option("--ps", raw.servers,
                 "With --comm ps: parameter server processes to start beside the workers; each holds an equal share "
                 "of the parameters and runs the optimiser on it");
  app.add_option("--staleness", raw.staleness,
                 "With --comm ps: 0 (default) is BSP, exactly the all-reduce's training; s > 0 is SSP: a worker may "
                 "run up to s steps ahead of the slowest (needs a fixed split: --policy equal or static)");
  app.add_option("--bucket-mb", c.comm.bucketMb, "All-reduce bucket size in MB (the first bucket is 1 MB, as in DDP)")
      ->capture_default_str();
  app.add_flag("--no-overlap", raw.noOverlap, "Send the buckets after backward instead of during it (for comparison)");
  app.add_option("--offload-below", c.comm.offloadBelow,
                 "With the all-reducing --comm modes (auto, allreduce, flat, hd, a2a): a worker whose share of the "
                 "batch is below "
                 "this fraction of the "
                 "largest share hands its gradient to a fast peer instead of joining the all-reduce (0: never)")
      ->capture_default_str();
  app.add_flag("--explain-comm", c.comm.explain, "Print how each layer's gradient is synchronised, at start");
}

// The optimiser and the learning-rate schedule.
void addOptimisationFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  auto& t = c.trainer;
  app.add_option("--optimizer", t.optimizer.name, "sgd, adam or adamw (Adam with decoupled --weight-decay)")
      ->capture_default_str();
  app.add_option("--lr", t.lr.baseLr, "Learning rate")->capture_default_str();
  app.add_option("--momentum", t.optimizer.momentum, "SGD momentum, in [0, 1)")->capture_default_str();
  app.add_option("--weight-decay", t.optimizer.weightDecay,
                 "Weight decay (>= 0): L2 on the gradient for sgd and adam, decoupled for adamw")
      ->capture_default_str();
  app.add_flag("--nesterov", t.optimizer.nesterov, "Nesterov momentum (SGD)");
  app.add_option("--clip-grad-norm", t.clipGradNorm,
                 "Scale the gradient down to this global L2 norm when above it, computed over the exact global "
                 "gradient (the same on every worker); 0: no clipping")
      ->capture_default_str();
  app.add_option("--accumulate", t.accumulate,
                 "Split each worker's share of a step into K micro-steps whose gradients add up (less memory, "
                 "the same gradient; BatchNorm sees the smaller batches)")
      ->capture_default_str();
  app.add_option("--warmup-steps", t.lr.warmupSteps, "Linear learning-rate warm-up")->capture_default_str();
  app.add_option("--lr-decay", raw.lrDecay, "constant, cosine (to --lr-min at the last step) or step")
      ->capture_default_str();
  app.add_option("--lr-min", t.lr.minLr, "Final learning rate of the cosine decay, in [0, --lr]")
      ->capture_default_str();
  app.add_option("--lr-step-every", t.lr.stepEvery, "Step decay period in steps")->capture_default_str();
  app.add_option("--lr-gamma", t.lr.gamma, "Step decay factor, in (0, 1]")->capture_default_str();
}

// The length of the run, its seed, and its trace.
void addRunFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  auto& t = c.trainer;
  app.add_option("--global-batch", raw.globalBatch,
                 "Samples per step over all workers. auto[:MIN:MAX[:START]]: chosen in [MIN, MAX] during training for "
                 "the most progress per second (goodput: the gradient noise scale against each worker's measured "
                 "speed), from START, the batch --lr is set for (auto: 32 to 4096 from 128; START defaults to 128 "
                 "within the range). B@STEP list (64,128@200): B by step")
      ->capture_default_str();
  app.add_option("--lr-scaling", c.orchestration.batchSizing.lrScaling,
                 "How the learning rate follows a B other than the first (auto or scheduled --global-batch): "
                 "adascale (SGD's auto: the gain from the gradient noise scale), sqrt (Adam's auto), linear, none")
      ->capture_default_str();
  app.add_option("--timeline", t.timelinePath,
                 "Write a Chrome trace of every rank's forward, backward, messages and waits (chrome://tracing, "
                 "ui.perfetto.dev)");
  app.add_option("--steps", t.steps, "Training steps (weight updates)")->capture_default_str();
  app.add_option("--seed", t.seed, "Seed for weights and data order")->capture_default_str();
}

// Evaluation, threads, where results go, logging.
void addOutputFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  auto& t = c.trainer;
  app.add_option("--eval-every", t.evalEvery, "Evaluate test accuracy every N steps (0: only at the end)")
      ->capture_default_str();
  app.add_option("--stop-at-accuracy", t.stopAtAccuracy,
                 "End the run at the first evaluation (every --eval-every steps, which must be > 0) whose test "
                 "accuracy reaches A, in (0, 1]; checkpoints and outputs as at --steps (0: run all --steps)")
      ->capture_default_str();
  app.add_option("--time-budget-s", t.timeBudgetS,
                 "End the run at the step where rank 0's training time (evaluations excluded) reaches T seconds, "
                 "decided one step ahead from the last step's time so every worker ends at the same step (0: no "
                 "budget)")
      ->capture_default_str();
  addResultFlags(app, c, raw);
  app.add_option("--export", c.exportPath,
                 "Write the trained state_dict here for PyTorch: model.load_state_dict(torch.load(FILE)) (atomic)");
}

}  // namespace

void addResultFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  app.add_option("--threads", c.threads,
                 "Intra-op and BLAS threads per worker (default: the cores this host allows, its affinity mask and "
                 "cgroup CPU quota, over its local workers, at least 1)")
      ->default_str("");  // the 1 it holds before validation is no default: the host decides
  app.add_option("--run-dir", c.trainer.runDir, "Where steps.csv and summary.json go (default: runs/<time>-<pid>)");
  app.add_option("--progress-seconds", raw.progressSeconds,
                 "Seconds between progress lines (default: 2 on a terminal, 10 otherwise; 0: none)");
  app.add_option("--save-params", c.saveParams, "Write the final parameters here (torch::save), atomically");
  app.add_option("--log-level", c.logLevel, "trace, debug, info, warn, error")->capture_default_str();
}

JobConfig defaultJobConfig() {
  JobConfig config;
  config.model.name = "cnn";
  config.data.cacheDir = data::defaultCacheDir();
  config.trainer.lr.baseLr = 0.05;
  return config;
}

void addTrainFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  // A flag given twice takes its last value, so wrappers and scripts can override defaults.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // Defaults are recorded so --print-config shows every value in effect, not only those given.
  app.option_defaults()->always_capture_default();
  addLaunchFlags(app, c, raw);
  addResilienceFlags(app, c, raw);
  addModelFlags(app, c);
  addAllocationFlags(app, c, raw);
  addPipelineFlags(app, c, raw);
  addEmulationFlags(app, raw);
  addCommFlags(app, c, raw);
  addRunFlags(app, c, raw);
  addOptimisationFlags(app, c, raw);
  addOutputFlags(app, c, raw);
  addCheckpointFlags(app, c.checkpoint);
  app.add_flag("--print-config", raw.printConfig,
               "Print the effective configuration as YAML (usable as --config) and exit");
  app.add_option("--config", raw.configPath,
                 "YAML file with any of these flags as keys, names without '--' (e.g. 'global-batch: 256' or "
                 "'global_batch: 256', 'split: [100, 28]', 'sync-bn: true'); flags on the command line override it");
  app.footer(environmentHelp());
}

void parseSubcommandWords(CLI::App& app, const std::vector<std::string>& args, bool expandConfig) {
  std::vector<std::string> words{app.get_name()};  // CLI11 takes the first word as the program's name
  words.insert(words.end(), args.begin(), args.end());
  try {
    if (expandConfig) words = expandConfigFile(words, app);
    std::vector<const char*> argv;
    for (const auto& w : words) argv.push_back(w.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{} (see --help)", firstLine(e.what())));
  }
}

JobConfig parseTrainCommandLine(const std::vector<std::string>& args) {
  CLI::App train{"balancenet train", "train"};
  JobConfig config = defaultJobConfig();
  RawFlags raw;
  addTrainFlags(train, config, raw);
  parseSubcommandWords(train, args, /*expandConfig=*/true);
  raw.threadsGiven = train.count("--threads") > 0;
  config.argv = {"balancenet", "train"};
  config.argv.insert(config.argv.end(), args.begin(), args.end());
  config.worker = launch::readWorkerEnvironment(config.launch);
  config.server = launch::readServerEnvironment();
  validateTrainFlags(config, raw);
  return config;
}

}  // namespace balancenet::cli

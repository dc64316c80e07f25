// Validation of the train flags: each value, and the combinations that cannot work, as one-line UsageErrors.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "balancenet/adaptive/BatchSizing.h"
#include "balancenet/adaptive/LrScaling.h"
#include "balancenet/cli/JobTokenFlags.h"
#include "balancenet/cli/PlacementCheck.h"
#include "balancenet/cli/TrainFlags.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/models/ScriptedNetwork.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
#include "balancenet/pipeline/MicroBatches.h"
#include "balancenet/pipeline/Schedule.h"
#include "balancenet/worker/WorkerThreads.h"

namespace balancenet::cli {
using job::CheckpointOptions;
using job::JobConfig;
using job::kAutoStages;
using job::kDefaultMicroBatchesPerStage;
using job::WorkerIdentity;
namespace {

std::chrono::milliseconds fromSeconds(double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); }

// --comm ps, --ps, --staleness; runs after the split and the policy are settled.
void validateParameterServers(JobConfig& c, const RawFlags& raw) {
  auto& p = c.comm;
  if (p.mode != comm::CommMode::ParameterServers) {
    require(raw.servers == kUnset, fmt::format("--ps is for --comm ps (got --comm {})", raw.comm));
    require(raw.staleness == kUnset, fmt::format("--staleness is for --comm ps (got --comm {})", raw.comm));
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

}  // namespace

// --elastic and friends, --stall-timeout, --join.
void validateResilience(JobConfig& c, const RawFlags& raw) {
  auto& r = c.resilience;
  // 0 is the documented default (the --rendezvous-timeout), so only a negative value is refused.
  require(raw.stallTimeoutS >= 0,
          fmt::format("--stall-timeout must not be negative (0: --rendezvous-timeout), got {}", raw.stallTimeoutS));
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
    if (c.pipeline.enabled() && r.maxRestarts > 0) {
      // A pipeline cannot go on without one of its stages: its launcher restarts the whole job from the newest
      // checkpoint, which only a launcher that runs every worker can do.
      require(!c.checkpoint.dir.empty(),
              "--max-restarts with --pipeline-stages restarts the whole job from its newest checkpoint: give "
              "--checkpoint-dir");
      require(c.launch.nnodes == 1,
              "--max-restarts with --pipeline-stages needs a job on one host (a launcher restarts only its own "
              "workers)");
      return;
    }
    require(r.maxRestarts == 0,
            "--max-restarts needs --elastic (a fixed job cannot take a worker back), or --pipeline-stages with "
            "--checkpoint-dir (the whole job restarts)");
    return;
  }
  require(r.minNodes <= world, fmt::format("--min-workers {} is more than the {} workers launched", r.minNodes, world));
  require(r.maxNodes >= world,
          fmt::format("--max-workers {} is fewer than the {} workers launched", r.maxNodes, world));
  // A global batch of 0 is a launched program's: its own data loader sizes the batch.
  require(c.trainer.globalBatch == 0 || r.maxNodes <= c.trainer.globalBatch,
          fmt::format("--max-workers {} is more than --global-batch {} (every worker needs at least one sample)",
                      r.maxNodes, c.trainer.globalBatch));
  require(comm::allReduces(c.comm.mode),
          fmt::format("--elastic works with --comm auto, allreduce, flat, hd or a2a, not --comm {}", raw.comm));
  require(!c.worker || c.worker->storeHostedByLauncher || r.join,
          "--elastic needs a store that outlives every worker: run 'balancenet train' without RANK set (the launcher "
          "hosts it)");
  require(!r.join || c.launch.masterPort != 0 || !c.launch.storeFile.empty(),
          "--join needs the running job's --store-file (one host) or --master-port and --master-addr (several)");
  if (r.join && !c.worker) {
    c.worker = WorkerIdentity{};
    c.worker->rank = -1;  // a new member id comes from the job's store
    c.worker->worldSize = world;
    c.worker->storeHostedByLauncher = true;
    c.worker->joining = true;
  }
}

namespace {

// --nproc-per-node: this host's count, or every host's by node rank.
void validateWorkersPerHost(job::LaunchOptions& l, const RawFlags& raw) {
  const auto counts = job::parseWorkersPerHost(raw.nprocPerNode);
  if (counts.size() == 1) {
    l.nprocPerNode = counts[0];
    return;
  }
  require(static_cast<int>(counts.size()) == l.nnodes,
          fmt::format("--nproc-per-node {} has {} counts but --nnodes is {}: one per host, by node rank",
                      raw.nprocPerNode, counts.size(), l.nnodes));
  l.hostWorkers = counts;
  l.nprocPerNode = counts.at(std::min(l.nodeRank, l.nnodes - 1));
}

// A launcher of several hosts given one count checks the flags below against --nnodes x its count until the hosts
// have met; they are named there if the hosts run another world (launch/HostMeeting.h).
void noteFlagsThatAssumeTheWorld(JobConfig& c, const RawFlags& raw) {
  auto& l = c.launch;
  if (c.worker || l.nnodes == 1 || !l.hostWorkers.empty()) return;
  const std::pair<bool, const char*> flags[] = {
      {!raw.split.empty(), "--split"},
      {raw.memoryLimitMb.find(',') != std::string::npos, "--memory-limit-mb"},
      {!raw.slowdown.empty() || !raw.slowdownSchedule.empty(), "--slowdown"},
      {!raw.nodeSpeed.empty() || !raw.speedSchedule.empty(), "--node-speed"},
      {!raw.netDelayMs.empty(), "--net-delay-ms"},
      {!raw.netBandwidthMbps.empty(), "--net-bandwidth-mbps"},
      {raw.pipelineStages != "1", "--pipeline-stages"},
      {c.resilience.minNodes != 1, "--min-workers"},
      {c.resilience.maxNodes != 0, "--max-workers"},
  };
  for (const auto& [given, flag] : flags)
    if (given) l.assumedWorldFlags.emplace_back(flag);
}

// srun and mpirun start each worker themselves and say how many there are: flags that say otherwise are a mistake
// in the job script, not something to guess around. (torchrun's and our own launcher's workers keep their flags.)
void validateSchedulerShape(const JobConfig& c) {
  const auto& l = c.launch;
  if (!c.worker || l.scheduler.empty() || l.scheduler == "torchrun") return;
  const int flagged = l.worldSize();  // --nproc-per-node 2,1: the sum
  if (flagged == 1 || flagged == c.worker->worldSize) return;
  std::string from = "the launcher";
  for (const auto& s : l.sources)
    if (s.setting == "world_size") from = s.from;
  throw UsageError(
      fmt::format("{}={} ({} starts each worker) but the flags ask for {} workers: drop --workers, --nnodes and "
                  "--nproc-per-node under srun or mpirun, or start {} tasks",
                  from, c.worker->worldSize, l.scheduler, flagged, flagged));
}

}  // namespace

// --workers, --nnodes, --node-rank, --nproc-per-node, --master-port, --rendezvous-timeout.
void validateLaunch(JobConfig& c, const RawFlags& raw) {
  auto& l = c.launch;
  validateWorkersPerHost(l, raw);
  noteFlagsThatAssumeTheWorld(c, raw);
  if (raw.workers != kUnset) {
    require(raw.workers >= 1, fmt::format("--workers must be at least 1, got {}", raw.workers));
    require(l.nnodes == 1, "--workers is for one host; with --nnodes use --nproc-per-node");
    l.nprocPerNode = raw.workers;
  }
  validateSchedulerShape(c);
  require(l.nodeRank < l.nnodes, fmt::format("--node-rank {} must be below --nnodes {}", l.nodeRank, l.nnodes));
  require(l.nnodes == 1 || c.worker || l.masterPort != 0,
          "a job over several hosts needs --master-port (and --master-addr) known to all of them");
  l.rendezvousTimeout = fromSeconds(raw.rendezvousTimeoutS);
}

// --model, --width, --dropout, and the data's flags.
void validateModel(const JobConfig& c) {
  auto names = models::modelNames();
  if (models::isScriptedModelPath(c.model.name)) {
    require(!c.syncBatchNorm, "--sync-bn needs a zoo model: a TorchScript model's BatchNorm layers cannot be replaced");
    // A bad file is one error before launch (LaunchChecks), where the data's samples probe it.
  } else if (std::find(names.begin(), names.end(), c.model.name) == names.end()) {
    throw UsageError(fmt::format("unknown --model '{}'; choose one of: {} (or a TorchScript file, *.pt)", c.model.name,
                                 fmt::join(names, ", ")));
  }
  require(c.model.width > 0, fmt::format("--width must be positive, got {}", c.model.width));
  require(c.model.dropout < 1, fmt::format("--dropout must be below 1, got {}", c.model.dropout));
}

namespace {

// The launched workers in the words of the flags (or the environment) that set their number.
std::string workersGiven(const JobConfig& c, int world) {
  if (c.worker) return fmt::format("WORLD_SIZE {}", world);
  if (!c.launch.hostWorkers.empty())
    return fmt::format("--nproc-per-node {} = {} workers", job::workersPerHostText(c.launch.hostWorkers), world);
  if (c.launch.nnodes > 1)
    return fmt::format("--nnodes {} x --nproc-per-node {} = {} workers", c.launch.nnodes, c.launch.nprocPerNode, world);
  return fmt::format("--nodes {}", world);
}

// A --partition list's syntax, as pipeline::Partition::parse reads it: one inclusive range "a-b" (or one block
// "a") per stage. Whether the ranges cover the model's blocks is checked where the model is built
// (launcher/PlacementCheck.h).
void validatePartitionSyntax(const std::string& text, int stages) {
  if (text == "uniform" || text == "flops" || text == "auto") return;
  static const std::regex kRanges(R"( *\d+(-\d+)? *(, *\d+(-\d+)? *)*)");
  require(
      std::regex_match(text, kRanges),
      fmt::format("--partition '{}' is none of uniform, flops, auto or inclusive block ranges like 0-9,10-17", text));
  require(stages != kAutoStages,
          fmt::format("--partition '{}' needs a number of stages: --pipeline-stages auto chooses it (use --partition "
                      "auto, flops or uniform)",
                      text));
  const int ranges = static_cast<int>(std::count(text.begin(), text.end(), ',')) + 1;
  require(ranges == stages, fmt::format("--partition '{}' has {} ranges but --pipeline-stages is {}: one per stage",
                                        text, ranges, stages));
}

// --pipeline-stages auto: the launcher profiles the model on this host and restarts the validation with the
// shape it chose, so what needs a known shape is refused here.
void validateAutoStages(const JobConfig& c, const RawFlags& raw) {
  require(c.launch.nnodes == 1 && !c.worker,
          "--pipeline-stages auto profiles the model on the launching host before any worker starts, which a job "
          "over several hosts (or one started by another launcher) cannot do: give --pipeline-stages S");
  require(raw.split.empty(), "--split needs a known number of pipelines: give --pipeline-stages S, not auto");
}

// --pipeline-stages, --micro-batches, --schedule, --partition and its companions, and the flags pipelines do not
// work with yet. Before the allocation, which splits the global batch over the pipelines.
void validatePipeline(JobConfig& c, const RawFlags& raw, int world) {
  auto& p = c.pipeline;
  c.memoryLimitMb = parseMemoryLimits(raw.memoryLimitMb, world);
  p.stages = parsePipelineStages(raw.pipelineStages);
  const bool autoStages = p.stages == kAutoStages;
  require(autoStages || world % p.stages == 0,
          fmt::format("{} is not a multiple of --pipeline-stages {}", workersGiven(c, world), p.stages));
  if (autoStages) validateAutoStages(c, raw);
  require(raw.microBatches == kUnset || raw.microBatches >= 1,
          fmt::format("--micro-batches must be at least 1, got {}", raw.microBatches));
  require(raw.microBatches <= pipeline::kMaxMicroBatches,  // each has its own message tags in a step
          fmt::format("--micro-batches must be at most {}, got {}", pipeline::kMaxMicroBatches, raw.microBatches));
  // Auto leaves 0: the planner's default for each shape it ranks, 4 x its stages (PlanInput::microBatches).
  p.microBatches = raw.microBatches == kUnset ? kDefaultMicroBatchesPerStage * p.stages : raw.microBatches;
  pipeline::parseScheduleKind(p.schedule);  // a UsageError naming both
  validatePartitionSyntax(p.partition, p.stages);
  require(!p.keepPartition || p.planned(), "--keep-partition is for --partition auto (no other partition moves)");
  if (p.stages == 1) {
    require(p.partition != "auto" && p.partition != "flops",
            fmt::format("--partition {} needs --pipeline-stages S > 1 (or auto): one stage has nothing to cut",
                        p.partition));
    require(!p.explainPartition, "--explain-partition needs --pipeline-stages S > 1 (or auto): one stage is not cut");
    return;
  }
  // The pipeline engine runs the plain all-reduce among a stage's replicas and has no membership changes
  // (a re-form would need a new cut) or factor capture yet; its --max-restarts restarts the whole job. (--export,
  // --save-params and
  // --checkpoint-dir/--resume are allowed: the engine gathers the model.)
  const std::pair<bool, std::string> unsupported[] = {
      {c.comm.mode != comm::CommMode::Auto && c.comm.mode != comm::CommMode::AllReduce, "--comm " + raw.comm},
      {raw.staleness != kUnset, "--staleness"},
      {c.syncBatchNorm, "--sync-bn"},
      {c.resilience.elastic, "--elastic"},
      {c.resilience.join, "--join"},
      // A pace in samples/s is kept by the data-parallel gradient sync; stages are slowed by --slowdown.
      {!raw.nodeSpeed.empty(), "--node-speed (use --slowdown)"},
  };
  for (const auto& [given, flag] : unsupported)
    require(!given, fmt::format("{} is not supported with --pipeline-stages {} yet", flag, raw.pipelineStages));
}

// --global-batch's form, first: every check of B against the job (--max-workers, the pipelines, the split)
// takes the B of step 0.
void parseGlobalBatchFlag(JobConfig& c, const RawFlags& raw) {
  auto& sizing = c.orchestration.batchSizing;
  const std::string lrScaling = sizing.lrScaling;  // --lr-scaling's text, which the parse below must keep
  sizing = adaptive::parseGlobalBatch(raw.globalBatch, c.trainer.globalBatch);
  sizing.lrScaling = lrScaling;
}

// An adaptive B against the rest of the job, and --lr-scaling, before the allocation that starts from the first B.
void validateBatchSizing(JobConfig& c, const RawFlags& raw, int world) {
  auto& sizing = c.orchestration.batchSizing;
  const auto rule = adaptive::parseLrScaling(sizing.lrScaling, c.trainer.optimizer.name);  // checked even if unused
  if (!sizing.adaptive()) return;
  const std::string what = fmt::format("--global-batch {}", raw.globalBatch);
  // The micro-batches and the stages' plan are made for one B; a server applies each update with its own rate.
  require(!c.pipeline.enabled() && c.pipeline.stages != kAutoStages,
          what + " is for data parallelism: a pipeline's micro-batches are planned for one B");
  require(c.comm.mode != comm::CommMode::ParameterServers,
          what + " needs the all-reducing modes: parameter servers apply each update at a rate of their own");
  // Each rank's own gradient is read after backward, before any sum: factors are sent during backward.
  require(!comm::capturesFactors(c.comm.mode),
          what + " reads each worker's whole gradient before the sum: not with --comm sfb or hybrid (factors)");
  // The noise scale compares the workers' own gradients: one worker has nothing to compare.
  require(sizing.mode != adaptive::BatchSizing::Mode::Auto || world >= 2,
          what + " measures the gradient noise scale across workers and needs at least 2 (give a number with 1)");
  sizing.lrScaling = adaptive::lrScalingName(rule);  // auto resolved for this optimizer
}

// --steps, --global-batch, --split, --policy. With pipelines, the split is over the pipelines (columns).
void validateAllocation(JobConfig& c, const RawFlags& raw, int world) {
  auto& t = c.trainer;
  require(t.steps > 0, fmt::format("--steps must be at least 1, got {}", t.steps));
  // --pipeline-stages auto: a worker per column until the launcher has chosen the shape (and validates again).
  const int columns = c.pipeline.stages == kAutoStages ? world : world / c.pipeline.stages;
  const std::string takers = c.pipeline.enabled() ? fmt::format("{} pipelines ({} workers / --pipeline-stages {})",
                                                                columns, world, c.pipeline.stages)
                                                  : fmt::format("{} workers", world);
  require(t.globalBatch >= columns,
          fmt::format("--global-batch {} is smaller than the {}: each needs at least 1 sample", t.globalBatch, takers));
  if (c.pipeline.enabled() && !raw.split.empty()) {
    const int entries = static_cast<int>(std::count(raw.split.begin(), raw.split.end(), ',')) + 1;
    require(entries == columns,
            fmt::format("--split has {} entries but the job has {}: one per pipeline", entries, takers));
  }
  c.split = raw.split.empty() ? Split::equal(t.globalBatch, columns) : Split::parse(raw.split, columns, t.globalBatch);
  validatePolicy(c, raw);
}

}  // namespace

// --policy, after --split: static when a split is given, else balanced (equal under SSP).
void validatePolicy(JobConfig& c, const RawFlags& raw) {
  // SSP needs a fixed split (see validateParameterServers): the default policy follows.
  const bool stale = raw.staleness != kUnset && raw.staleness > 0;
  auto& o = c.orchestration;
  o.policy = !raw.policy.empty() ? raw.policy : (raw.split.empty() ? (stale ? "equal" : "balanced") : "static");
  auto policies = orchestrator::policyNames();
  if (std::find(policies.begin(), policies.end(), o.policy) == policies.end())
    throw UsageError(fmt::format("unknown --policy '{}'; choose one of: {}", o.policy, fmt::join(policies, ", ")));
}

// --slowdown, --node-speed (and their schedules), --net-delay-ms, --net-bandwidth-mbps.
void validateEmulation(JobConfig& c, const RawFlags& raw, int world) {
  auto& e = c.emulation;
  e.slowdown =
      emulation::FactorSchedule::parse("--slowdown", raw.slowdown, "--slowdown-schedule", raw.slowdownSchedule, world);
  e.nodeSpeed =
      emulation::FactorSchedule::parse("--node-speed", raw.nodeSpeed, "--speed-schedule", raw.speedSchedule, world);
  // A factor below 1 would ask for a faster worker; the emulation can only add time, so it would do nothing.
  require(e.slowdown.empty() || e.slowdown.smallest() >= 1,
          fmt::format("--slowdown factors must be at least 1 (1: full speed), got {}", e.slowdown.smallest()));
  require(e.slowdown.empty() || e.nodeSpeed.empty(), "--slowdown and --node-speed exclude each other");
  if (!raw.netDelayMs.empty())
    e.netDelayMs = emulation::FactorSchedule::perNode("--net-delay-ms", raw.netDelayMs, world, /*allowZero=*/true);
  if (!raw.netBandwidthMbps.empty())
    e.netBandwidthMbps =
        emulation::FactorSchedule::perNode("--net-bandwidth-mbps", raw.netBandwidthMbps, world, /*allowZero=*/true);
}

namespace {

// --comm, --bucket-mb, --no-overlap, --offload-below (the parameter servers' flags after the policy: see
// validateParameterServers).
void validateComm(JobConfig& c, const RawFlags& raw) {
  auto mode = comm::commModeNamed(raw.comm);
  require(mode.has_value(),
          fmt::format("unknown --comm '{}'; choose one of: {}", raw.comm, fmt::join(comm::commModeNames(), ", ")));
  c.comm.mode = *mode;
  require(c.comm.bucketMb > 0, fmt::format("--bucket-mb must be positive, got {}", c.comm.bucketMb));
  c.comm.overlap = !raw.noOverlap;
  require(c.comm.offloadBelow >= 0 && c.comm.offloadBelow <= 1,
          fmt::format("--offload-below must be between 0 and 1, got {}", c.comm.offloadBelow));
}

// The optimiser and the learning-rate schedule.
void validateOptimisation(JobConfig& c, const RawFlags& raw) {
  auto& t = c.trainer;
  require(t.lr.baseLr > 0, fmt::format("--lr must be positive, got {}", t.lr.baseLr));
  require(t.lr.warmupSteps >= 0, "--warmup-steps must not be negative");
  require(t.lr.minLr >= 0 && t.lr.minLr <= t.lr.baseLr,
          fmt::format("--lr-min must be in [0, --lr {}], got {}", t.lr.baseLr, t.lr.minLr));
  require(t.lr.gamma > 0 && t.lr.gamma <= 1, fmt::format("--lr-gamma must be in (0, 1], got {}", t.lr.gamma));
  require(t.lr.stepEvery >= 1, fmt::format("--lr-step-every must be at least 1, got {}", t.lr.stepEvery));
  require(t.optimizer.momentum >= 0 && t.optimizer.momentum < 1,
          fmt::format("--momentum must be in [0, 1), got {}", t.optimizer.momentum));
  require(t.optimizer.weightDecay >= 0,
          fmt::format("--weight-decay must not be negative, got {}", t.optimizer.weightDecay));
  require(t.optimizer.name == "sgd" || t.optimizer.name == "adam" || t.optimizer.name == "adamw",
          fmt::format("--optimizer must be sgd, adam or adamw, got '{}'", t.optimizer.name));
  require(t.clipGradNorm >= 0, fmt::format("--clip-grad-norm must not be negative, got {}", t.clipGradNorm));
  require(t.accumulate >= 1, fmt::format("--accumulate must be at least 1, got {}", t.accumulate));
  t.lr.decay = trainer::LrSchedule::parseDecay(raw.lrDecay);
  t.lr.totalSteps = t.steps;
}

// Checkpoint flags, after the others: their values and the combinations that cannot work.
void validateCheckpoints(const JobConfig& c) {
  validateCheckpointFlags(c.checkpoint);
  // The parameter servers own the weights and the optimiser state there; their shards are not saved.
  require(c.checkpoint.dir.empty() || c.comm.mode != comm::CommMode::ParameterServers,
          "--checkpoint-dir does not work with --comm ps (the servers' shards are not saved)");
}

// --clip-grad-norm and --accumulate with the ways of training that cannot honour them exactly.
void validateGradientShaping(const JobConfig& c) {
  const auto& t = c.trainer;
  require(t.clipGradNorm == 0 || c.comm.mode != comm::CommMode::ParameterServers,
          "--clip-grad-norm needs the whole gradient on the workers: not with --comm ps (the servers update)");
  require(t.accumulate == 1 || !comm::capturesFactors(c.comm.mode),
          "--accumulate needs whole gradients: not with --comm sfb or hybrid (factors of one micro-step each)");
  require(t.accumulate == 1 || !c.pipeline.enabled(),
          "--accumulate with --pipeline-stages: the stages already split each share into --micro-batches");
}

}  // namespace

// (--checkpoint-every and --keep-checkpoints alone are harmless defaults, as --print-config writes them.)
void validateCheckpointFlags(const CheckpointOptions& o) {
  if (o.dir.empty()) return require(!o.resume, "--resume needs --checkpoint-dir");
  require(o.every >= 1, fmt::format("--checkpoint-every must be at least 1, got {}", o.every));
  require(o.keep >= 1, fmt::format("--keep-checkpoints must be at least 1, got {}", o.keep));
}

int parsePipelineStages(const std::string& text) {
  if (text == "auto") return kAutoStages;
  const auto stages = parseInteger<int>(text);
  if (!stages) throw UsageError(fmt::format("--pipeline-stages must be a number of stages or auto, got '{}'", text));
  if (*stages < 1)
    throw UsageError(fmt::format("--pipeline-stages must be at least 1 (1: data parallelism), got {}", *stages));
  return *stages;
}

namespace {

// Runs the checks of `check` that count workers; where this launcher only assumes the world (one --nproc-per-node
// on several hosts, see noteFlagsThatAssumeTheWorld), a refusal says so and names the list form.
template <typename Check>
void againstTheWorld(const JobConfig& c, Check check) {
  try {
    check();
  } catch (const UsageError& e) {
    const auto& l = c.launch;
    if (l.assumedWorldFlags.empty()) throw;
    throw UsageError(
        fmt::format("{} (this launcher assumes --nnodes {} x --nproc-per-node {} = {} workers until the "
                    "hosts meet; if hosts run different counts, give every host the list, e.g. "
                    "--nproc-per-node {},1)",
                    e.what(), l.nnodes, l.nprocPerNode, l.worldSize(), l.nprocPerNode));
  }
}

// --eval-every, --stop-at-accuracy, --time-budget-s: when the run evaluates and ends.
void validateStopping(const trainer::TrainerOptions& t) {
  require(t.evalEvery >= 0, "--eval-every must not be negative");
  require(t.stopAtAccuracy >= 0 && t.stopAtAccuracy <= 1,
          fmt::format("--stop-at-accuracy must be in (0, 1], got {}", t.stopAtAccuracy));
  require(t.stopAtAccuracy == 0 || t.evalEvery > 0,
          "--stop-at-accuracy needs --eval-every N > 0: the run stops at an evaluation");
  require(t.timeBudgetS >= 0, fmt::format("--time-budget-s must not be negative, got {}", t.timeBudgetS));
}

}  // namespace

void validateTrainFlags(JobConfig& c, const RawFlags& raw) {
  parseGlobalBatchFlag(c, raw);
  validateLaunch(c, raw);
  validateComm(c, raw);
  const int world = c.worker ? c.worker->worldSize : c.launch.worldSize();
  againstTheWorld(c, [&] {
    validatePipeline(c, raw, world);
    validateResilience(c, raw);
  });
  settleJobToken(c, raw.jobTokenFile);  // after --join, which makes this process a worker
  validateModel(c);
  validateGradientShaping(c);
  againstTheWorld(c, [&] {
    validateBatchSizing(c, raw, world);
    validateAllocation(c, raw, world);
    validateEmulation(c, raw, world);
  });
  validateParameterServers(c, raw);
  validateOptimisation(c, raw);
  validateStopping(c.trainer);
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  if (c.worker && !raw.threadsGiven) worker::chooseDefaultThreads(c);
  c.trainer.modelName = c.model.name;
  validateCheckpoints(c);
}

}  // namespace balancenet::cli

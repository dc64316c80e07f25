// The pipeline flags: declared for train, validated into config.pipeline and the memory caps.
#include "balancenet/cli/flags/PipelineFlags.h"

#include <algorithm>
#include <regex>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/PlacementCheck.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/pipeline/MicroBatches.h"
#include "balancenet/pipeline/Schedule.h"

namespace balancenet::cli {
using job::JobConfig;
using job::kAutoStages;
using job::kDefaultMicroBatchesPerStage;

// Pipeline parallelism: the model cut into stages, each share of the batch into micro-batches.
void addPipelineFlags(CLI::App& app, JobConfig& c, PipelineRaw& raw) {
  auto& p = c.pipeline;
  app.add_option("--pipeline-stages", raw.pipelineStages,
                 "Cut the model into this many stages, each on its own worker: the workers form --nodes / stages "
                 "pipelines, each taking one share of the global batch (--split then has one value per pipeline); "
                 "1 is data parallelism; auto: the launcher profiles the model, ranks every shape (data "
                 "parallelism, pipelines, stages with replicas) by predicted step time and runs the best (see "
                 "docs/pipeline.md)")
      ->capture_default_str();
  app.add_option("--micro-batches", raw.microBatches,
                 fmt::format("With --pipeline-stages: micro-batches each pipeline's share is cut into per step "
                             "(default: {} x stages); more shrink the idle bubble and the activations a micro-batch "
                             "holds",
                             kDefaultMicroBatchesPerStage))
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
  require(raw.allocation.split.empty(),
          "--split needs a known number of pipelines: give --pipeline-stages S, not auto");
}

}  // namespace

// --pipeline-stages, --micro-batches, --schedule, --partition and its companions, and the flags pipelines do not
// work with yet. Before the allocation, which splits the global batch over the pipelines.
void validatePipeline(JobConfig& c, const RawFlags& raw, int world) {
  auto& p = c.pipeline;
  c.memoryLimitMb = parseMemoryLimits(raw.pipeline.memoryLimitMb, world);
  p.stages = parsePipelineStages(raw.pipeline.pipelineStages);
  const bool autoStages = p.stages == kAutoStages;
  require(autoStages || world % p.stages == 0,
          fmt::format("{} is not a multiple of --pipeline-stages {}", workersGiven(c, world), p.stages));
  if (autoStages) validateAutoStages(c, raw);
  require(raw.pipeline.microBatches == kUnset || raw.pipeline.microBatches >= 1,
          fmt::format("--micro-batches must be at least 1, got {}", raw.pipeline.microBatches));
  require(
      raw.pipeline.microBatches <= pipeline::kMaxMicroBatches,  // each has its own message tags in a step
      fmt::format("--micro-batches must be at most {}, got {}", pipeline::kMaxMicroBatches, raw.pipeline.microBatches));
  // Auto leaves 0: the planner's default for each shape it ranks, 4 x its stages (PlanInput::microBatches).
  p.microBatches =
      raw.pipeline.microBatches == kUnset ? kDefaultMicroBatchesPerStage * p.stages : raw.pipeline.microBatches;
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
  // A stage's replicas sum their gradients with one all-reduce after the schedule, by --comm's algorithm
  // (worker/SyncFactory's makeStageSync: auto, flat, hd, a2a); allreduce's buckets would overlap a backward
  // pass that the micro-batches split, and there are no membership changes (a re-form would need a new cut)
  // or factor capture yet; its --max-restarts restarts the whole job. (--export, --save-params and
  // --checkpoint-dir/--resume are allowed: the engine gathers the model.)
  const auto mode = c.comm.mode;
  const std::pair<bool, std::string> unsupported[] = {
      {mode == comm::CommMode::AllReduce,
       "--comm allreduce (its buckets overlap backward; stages take --comm auto, flat, hd or a2a)"},
      {mode == comm::CommMode::SufficientFactors || mode == comm::CommMode::Hybrid ||
           mode == comm::CommMode::ParameterServers,
       "--comm " + raw.comm.comm},
      {raw.comm.staleness != kUnset, "--staleness"},
      {c.syncBatchNorm, "--sync-bn"},
      {c.resilience.elastic, "--elastic"},
      {c.resilience.join, "--join"},
      // A pace in samples/s is kept by the data-parallel gradient sync; stages are slowed by --slowdown.
      {!raw.emulation.nodeSpeed.empty(), "--node-speed (use --slowdown)"},
  };
  for (const auto& [given, flag] : unsupported)
    require(!given,
            fmt::format("{} is not supported with --pipeline-stages {} yet", flag, raw.pipeline.pipelineStages));
}

int parsePipelineStages(const std::string& text) {
  if (text == "auto") return kAutoStages;
  const auto stages = parseInteger<int>(text);
  if (!stages) throw UsageError(fmt::format("--pipeline-stages must be a number of stages or auto, got '{}'", text));
  if (*stages < 1)
    throw UsageError(fmt::format("--pipeline-stages must be at least 1 (1: data parallelism), got {}", *stages));
  return *stages;
}

}  // namespace balancenet::cli

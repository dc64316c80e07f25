// The placement check: the stages' blocks from --partition, each worker's memory from pipeline/MemoryEstimate.h.
#include "balancenet/cli/PlacementCheck.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/memory/PassFit.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/pipeline/MemoryEstimate.h"
#include "balancenet/pipeline/Partition.h"
#include "balancenet/pipeline/Schedule.h"
#include "balancenet/pipeline/planner/Planner.h"
#include "balancenet/recompute/RecomputeMemory.h"
#include "balancenet/recompute/RecomputeMode.h"
#include "balancenet/recompute/RecomputedForward.h"
#include "balancenet/trainer/TrainerOptions.h"
#include "balancenet/worker/StagePlacement.h"
#include "balancenet/worker/WorkerMemory.h"

namespace balancenet::cli {
using job::JobConfig;
using job::kDefaultMicroBatchesPerStage;
namespace {

using models::BlockInfo;

// What a placement is, as far as memory goes: the stages' blocks, each pipeline's share, M and the schedule.
struct Placement {
  pipeline::Partition partition;
  Split split;  // one share per pipeline (column)
  int micros = 1;
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::OneFOneB;
  int64_t accumulate = 1;  // data parallelism: --accumulate's micro-steps (kAccumulateAuto: one sample a pass fits)
};

// One worker's estimate: stage s of the pipeline with the largest share (its replicas hold no more).
struct WorkerLoad {
  int rank = 0;
  std::string what;  // "the whole model" or "stage 1, blocks 5-9"
  pipeline::StageMemory memory;
};

// Every worker's load: stage s of column j is rank j * S + s (pipeline::Topology's numbering), with column j's
// share; data parallelism is S = 1, each worker the whole model with its own share.
std::vector<WorkerLoad> workerLoads(const std::vector<BlockInfo>& blocks, const Placement& p, const JobConfig& c) {
  const std::string& optimizer = c.trainer.optimizer.name;
  int64_t parameters = 0;
  for (const auto& b : blocks) parameters += b.parameters;
  const int stages = p.partition.stageCount();
  std::vector<WorkerLoad> loads;
  for (size_t column = 0; column < p.split.batches.size(); ++column) {
    const int64_t share = p.split.batches[column];
    for (int s = 0; s < stages; ++s) {
      const auto range = p.partition.stages[s];
      WorkerLoad load;
      load.rank = static_cast<int>(column) * stages + s;
      if (stages == 1) {
        load.what = "the whole model";
        // Under --accumulate auto a worker fits if one sample does: its share is cut into as many passes as needed.
        const int64_t pass = p.accumulate == trainer::kAccumulateAuto
                                 ? 1
                                 : std::max<int64_t>(1, (share + p.accumulate - 1) / p.accumulate);
        load.memory = pipeline::estimateStageMemory(blocks, range, pass, /*inFlight=*/1, optimizer);
        // --recompute (auto counted as on: a worker it would not help fits without): the blocks' inputs and one
        // block rebuilt, a pass's worth.
        if (c.trainer.recompute != recompute::RecomputeMode::None && blocks.size() >= 2)
          load.memory.activationBytes = recompute::recomputedBytesPerSample(blocks) * pass;
        // --shard-state: the optimiser's slots for this worker's slice only.
        load.memory.stateBytes =
            worker::stateBytesOf(c, parameters, load.rank, static_cast<int>(p.split.batches.size()));
      } else {
        // A share smaller than M is cut into one-sample micro-batches, `share` of them (pipeline/MicroBatches.h).
        const int micros = static_cast<int>(std::min<int64_t>(p.micros, share));
        const int inFlight = pipeline::peakInFlight(pipeline::stageActions(p.schedule, s, stages, micros));
        load.what = fmt::format("stage {}, blocks {}-{}", s, range.first, range.end - 1);
        load.memory = pipeline::estimateStageMemory(blocks, range, (share + micros - 1) / micros, inFlight, optimizer);
      }
      loads.push_back(std::move(load));
    }
  }
  return loads;
}

// Throws the first worker's refusal (the largest excess first, so the message names the tightest worker).
void requireAllFit(std::vector<WorkerLoad> loads, const JobConfig& c, const std::string& hint) {
  auto excess = [&c](const WorkerLoad& l) {
    const double cap = c.memoryLimitMbOf(l.rank);
    return cap > 0 ? static_cast<double>(l.memory.total()) / (cap * 1024 * 1024) : 0.0;
  };
  std::stable_sort(loads.begin(), loads.end(),
                   [&](const WorkerLoad& a, const WorkerLoad& b) { return excess(a) > excess(b); });
  for (const auto& load : loads)
    pipeline::requireFits(load.memory, c.memoryLimitMbOf(load.rank), load.rank, load.what, hint);
}

// Asks requireFits itself, so that a suggested placement is one the check would accept, in the same units.
bool fits(const std::vector<WorkerLoad>& loads, const JobConfig& c) {
  try {
    requireAllFit(loads, c, "");
  } catch (const UsageError&) {
    return false;
  }
  return true;
}

// The smallest K in {2, 4, 8, ...}, above the stages asked for and dividing the world, whose uniform cut with
// the default M and an equal split over the world / K pipelines fits every worker; 0 if there is none.
int stagesThatFit(const std::vector<BlockInfo>& blocks, const JobConfig& c, const Placement& asked, int world) {
  for (int k = 2; k <= world && k <= static_cast<int>(blocks.size()); k *= 2) {
    if (k <= asked.partition.stageCount() || world % k != 0) continue;
    const Placement candidate{pipeline::Partition::uniform(blocks.size(), k),
                              Split::equal(c.trainer.globalBatch, world / k), kDefaultMicroBatchesPerStage * k,
                              asked.schedule};
    if (fits(workerLoads(blocks, candidate, c), c)) return k;
  }
  return 0;
}

// Costs proportional to each block's FLOPs, the same on every worker, and each worker's cap: enough to ask
// the planner what fits.
pipeline::PlanInput memoryOnlyPlanInput(const std::vector<models::BlockInfo>& blocks, const JobConfig& c) {
  pipeline::PlanInput input = worker::jobPlanInput(c, blocks);
  const int world = c.worker ? c.worker->worldSize : c.launch.worldSize();
  for (int rank = 0; rank < world; ++rank) {
    pipeline::NodeCosts node;
    for (const auto& b : blocks) {
      node.forwardMs.push_back(1e-9 * static_cast<double>(b.flopsPerSample + 1));
      node.backwardMs.push_back(2e-9 * static_cast<double>(b.flopsPerSample + 1));
    }
    node.memoryLimitBytes = c.memoryLimitMbOf(rank) * 1024 * 1024;
    input.nodes.push_back(std::move(node));
  }
  return input;
}

// --partition auto: whether a placement fits depends on the memory estimates only, not on the times, so the
// planner asked with every block costing its FLOPs on every worker refuses exactly what it will refuse once
// the workers have measured (its UsageError names the tightest worker).
void requirePlannedPlacementFits(const std::vector<BlockInfo>& blocks, const JobConfig& c) {
  pipeline::PlanRequest request;
  request.stages = c.pipeline.stages;
  pipeline::planPlacement(memoryOnlyPlanInput(blocks, c), request);
}

}  // namespace

void checkPlacement(const JobConfig& c) {
  const auto& p = c.pipeline;
  const bool recomputing = c.trainer.recompute == recompute::RecomputeMode::Blocks;
  // Building a large model takes a while: only when there is something to check.
  if (!p.enabled() && !c.memoryLimited() && !recomputing) return;
  const auto blocks = models::buildModel(c.model).net->blocks();
  if (recomputing) recompute::requireRecomputableBlocks(blocks.size());
  if (p.planned()) {
    if (c.memoryLimited()) requirePlannedPlacementFits(blocks, c);
    return;
  }
  const Placement placement{worker::givenPartition(c, blocks), c.split, p.microBatches,
                            pipeline::parseScheduleKind(p.schedule), c.trainer.accumulate};
  if (!c.memoryLimited()) return;
  const auto loads = workerLoads(blocks, placement, c);
  if (fits(loads, c)) return;
  const int world = c.split.worldSize() * p.stages;
  const int k = c.trainer.shardState ? 0 : stagesThatFit(blocks, c, placement, world);  // (not with stages)
  std::string hint = k > 0 ? fmt::format("try --pipeline-stages {}", k) : "";
  auto suggest = [&hint](const std::string& what) { hint += std::string(hint.empty() ? "try " : ", or ") + what; };
  if (!p.enabled() && c.trainer.accumulate != trainer::kAccumulateAuto) {
    Placement passes = placement;
    passes.accumulate = trainer::kAccumulateAuto;
    if (fits(workerLoads(blocks, passes, c), c)) suggest("--accumulate auto (the share in passes that fit)");
  }
  // A data-parallel mode suggested where its job fits: in one pass of each share, or else in passes.
  auto suggestIfFits = [&](const JobConfig& changed, const std::string& what) {
    Placement passes = placement;
    passes.accumulate = trainer::kAccumulateAuto;
    if (fits(workerLoads(blocks, placement, changed), changed))
      suggest(what);
    else if (fits(workerLoads(blocks, passes, changed), changed))
      suggest(what + " with --accumulate auto");
  };
  if (!p.enabled() && c.trainer.recompute == recompute::RecomputeMode::None && blocks.size() >= 2) {
    JobConfig recomputing = c;
    recomputing.trainer.recompute = recompute::RecomputeMode::Auto;
    suggestIfFits(recomputing, "--recompute auto (the blocks' activations rebuilt in backward)");
  }
  if (!p.enabled() && !c.trainer.shardState) {
    JobConfig sharded = c;
    sharded.trainer.shardState = true;
    suggestIfFits(sharded, "--shard-state (the optimiser state in slices by memory)");
  }
  requireAllFit(loads, c, hint);
}

std::vector<DataParallelMode> dataParallelModes(const JobConfig& c) {
  const auto blocks = models::buildModel(c.model).net->blocks();
  const Placement onePass{pipeline::Partition::uniform(blocks.size(), 1), c.split, 1, pipeline::ScheduleKind::OneFOneB,
                          1};
  struct Way {
    const char* flags;
    bool passes, recomputed, sharded;
  };
  const std::vector<Way> ways{{"", false, false, false},
                              {"--accumulate auto", true, false, false},
                              {"--recompute blocks", false, true, false},
                              {"--recompute blocks --accumulate auto", true, true, false},
                              {"--shard-state", false, false, true},
                              {"--shard-state --accumulate auto", true, false, true},
                              {"--shard-state --recompute blocks --accumulate auto", true, true, true}};
  std::vector<DataParallelMode> modes;
  for (const auto& way : ways) {
    if (way.recomputed && blocks.size() < 2) continue;
    JobConfig changed = c;
    changed.trainer.recompute = way.recomputed ? recompute::RecomputeMode::Blocks : recompute::RecomputeMode::None;
    changed.trainer.shardState = way.sharded;
    Placement placement = onePass;
    placement.accumulate = way.passes ? trainer::kAccumulateAuto : 1;
    DataParallelMode mode{way.flags, {}, {}, true, -1};
    double worst = 0;
    for (const auto& load : workerLoads(blocks, placement, changed)) {
      const double cap = c.memoryLimitMbOf(load.rank) * 1024 * 1024;
      const int64_t share = c.split.batches[load.rank];
      int64_t passes = 1;
      double bytes = static_cast<double>(load.memory.total());
      if (way.passes) {  // the load is one sample's pass: the share in the fewest passes that fit
        const memory::WorkerFootprint footprint{load.memory.stateBytes, load.memory.activationBytes};
        const int64_t perPass = memory::samplesPerPass(footprint, cap);
        passes = perPass > 0 ? memory::microStepsFor(share, perPass) : 1;
        const int64_t pass = perPass > 0 ? (share + passes - 1) / passes : 1;
        bytes = static_cast<double>(footprint.stateBytes + footprint.bytesPerSample * pass);
      }
      mode.mib.push_back(bytes / (1024 * 1024));
      mode.passes.push_back(passes);
      if (cap > 0 && bytes / cap > std::max(1.0, worst)) {
        worst = bytes / cap;
        mode.fits = false;
        mode.tightest = load.rank;
      }
    }
    modes.push_back(std::move(mode));
  }
  return modes;
}

std::vector<double> parseMemoryLimits(const std::string& text, int workers) {
  std::vector<double> limits;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto mb = parseFiniteNumber(item);
    if (!mb || *mb < 0)
      throw UsageError(
          fmt::format("--memory-limit-mb must be a finite number, at least 0 (0: no limit), got '{}'", item));
    limits.push_back(*mb);
  }
  if (limits.size() == 1) limits.assign(workers, limits[0]);
  if (static_cast<int>(limits.size()) != workers)
    throw UsageError(
        fmt::format("--memory-limit-mb has {} values but the job has {} workers: give one for all or "
                    "one per worker",
                    limits.size(), workers));
  if (std::all_of(limits.begin(), limits.end(), [](double mb) { return mb == 0; })) return {};
  return limits;
}

}  // namespace balancenet::cli

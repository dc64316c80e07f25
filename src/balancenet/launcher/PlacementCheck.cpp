// The placement check: the stages' blocks from --partition, each worker's memory from pipeline/MemoryEstimate.h.
#include "balancenet/launcher/PlacementCheck.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/pipeline/MemoryEstimate.h"
#include "balancenet/pipeline/Partition.h"
#include "balancenet/pipeline/Schedule.h"

namespace balancenet::launcher {
namespace {

using models::BlockInfo;

// What a placement is, as far as memory goes: the stages' blocks, each pipeline's share, M and the schedule.
struct Placement {
  pipeline::Partition partition;
  Split split;  // one share per pipeline (column)
  int micros = 1;
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::OneFOneB;
};

// One worker's estimate: stage s of the pipeline with the largest share (its replicas hold no more).
struct WorkerLoad {
  int rank = 0;
  std::string what;  // "the whole model" or "stage 1, blocks 5-9"
  pipeline::StageMemory memory;
};

pipeline::Partition resolvePartition(const std::string& text, size_t blocks, int stages) {
  return text == "uniform" ? pipeline::Partition::uniform(blocks, stages)
                           : pipeline::Partition::parse(text, blocks, stages);
}

std::vector<WorkerLoad> stageLoads(const std::vector<BlockInfo>& blocks, const Placement& p,
                                   const std::string& optimizer) {
  const int stages = p.partition.stageCount();
  const auto& shares = p.split.batches;
  const int column = static_cast<int>(std::max_element(shares.begin(), shares.end()) - shares.begin());
  const int64_t share = shares[column];
  std::vector<WorkerLoad> loads;
  for (int s = 0; s < stages; ++s) {
    const auto range = p.partition.stages[s];
    WorkerLoad load;
    load.rank = column * stages + s;  // pipeline::Topology's numbering
    if (stages == 1) {
      load.what = "the whole model";
      load.memory = pipeline::estimateStageMemory(blocks, range, share, /*inFlight=*/1, optimizer);
    } else {
      // A share smaller than M is cut into one-sample micro-batches, `share` of them (pipeline/MicroBatches.h).
      const int micros = static_cast<int>(std::min<int64_t>(p.micros, share));
      const int inFlight = pipeline::peakInFlight(pipeline::stageActions(p.schedule, s, stages, micros));
      load.what = fmt::format("stage {}, blocks {}-{}", s, range.first, range.end - 1);
      load.memory = pipeline::estimateStageMemory(blocks, range, (share + micros - 1) / micros, inFlight, optimizer);
    }
    loads.push_back(std::move(load));
  }
  return loads;
}

// Asks requireFits itself, so that a suggested placement is one the check would accept, in the same units.
bool fits(const std::vector<WorkerLoad>& loads, double limitMb) {
  try {
    for (const auto& load : loads) pipeline::requireFits(load.memory, limitMb, load.rank, load.what, "");
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
    if (fits(stageLoads(blocks, candidate, c.trainer.optimizer.name), c.memoryLimitMb)) return k;
  }
  return 0;
}

}  // namespace

void checkPlacement(const JobConfig& c) {
  const auto& p = c.pipeline;
  if (!p.enabled() && c.memoryLimitMb <= 0) return;  // building a large model takes a while: only when needed
  const auto blocks = models::buildModel(c.model).net->blocks();
  const Placement placement{resolvePartition(p.partition, blocks.size(), p.stages), c.split, p.microBatches,
                            pipeline::parseScheduleKind(p.schedule)};
  if (c.memoryLimitMb <= 0) return;
  const auto loads = stageLoads(blocks, placement, c.trainer.optimizer.name);
  if (fits(loads, c.memoryLimitMb)) return;
  const int world = c.split.worldSize() * p.stages;
  const int k = stagesThatFit(blocks, c, placement, world);
  const std::string hint = k > 0 ? fmt::format("try --pipeline-stages {}", k) : "";
  for (const auto& load : loads) pipeline::requireFits(load.memory, c.memoryLimitMb, load.rank, load.what, hint);
}

}  // namespace balancenet::launcher

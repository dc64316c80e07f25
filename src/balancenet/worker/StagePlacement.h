// StagePlacement: where a pipeline job's stages run, decided once by every worker together: the blocks of
// each stage and which rank sits in which slot, from --partition (uniform, flops, ranges: ranks in order) or
// planned from every worker's measured block costs (auto).
#pragma once
#include <optional>
#include <vector>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/models/Network.h"
#include "balancenet/pipeline/planner/Planner.h"

namespace balancenet::worker {

struct StagePlacement {
  // The same on every rank: partition, slotRanks (the identity unless planned) and shares (c.split unless
  // planned). On rank 0 with a profile, also its predictions.
  pipeline::Placement placement;
  // Every worker's measured costs and the links (--partition auto or --explain-partition; else empty).
  std::optional<pipeline::PlanInput> profile;
};

// Collective over `world`. With --partition auto or --explain-partition each rank profiles `net` on a
// micro-batch of `train` (ceil(B / (R x M)) images: the size the plan is for), then costs and links are
// gathered; with auto rank 0 plans and broadcasts the placement (its UsageError when nothing fits reaches
// the other ranks as a UsageError too, so no rank waits for ever).
StagePlacement placeStages(const job::JobConfig& c, comm::Communicator& world, models::Network& net,
                           const data::Dataset& train);

// M, the micro-batches per pipeline per step: --micro-batches, or its default, 4 x stages.
int microBatchesOf(const job::JobConfig& c);

// --partition uniform, flops or block ranges against the model's blocks (not auto: that is planned), as the
// launcher checks it and every worker runs it. A bad range list is a UsageError.
pipeline::Partition givenPartition(const job::JobConfig& c, const std::vector<models::BlockInfo>& blocks);

// The job's side of a plan: the blocks, B, M, the schedule and the optimiser; no node costs and no links.
pipeline::PlanInput jobPlanInput(const job::JobConfig& c, const std::vector<models::BlockInfo>& blocks);

}  // namespace balancenet::worker

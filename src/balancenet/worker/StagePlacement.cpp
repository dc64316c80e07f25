// StagePlacement: the partition and the slots every worker runs, given (uniform, flops, ranges) or planned.
#include "balancenet/worker/StagePlacement.h"

#include <exception>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/BlockProfiler.h"

namespace balancenet::worker {
using job::JobConfig;
using job::kDefaultMicroBatchesPerStage;
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;

// Every rank's block costs on a micro-batch of real images, its slowdown at step 0 and its cap, and the links.
pipeline::PlanInput measure(const JobConfig& c, comm::Communicator& world, models::Network& net,
                            const data::Dataset& train, const std::vector<models::BlockInfo>& blocks) {
  const int64_t columns = world.size() / c.pipeline.stages;
  const int64_t perStep = columns * microBatchesOf(c);
  const int64_t microBatch = (c.trainer.globalBatch + perStep - 1) / perStep;
  const int64_t rows = std::min<int64_t>(std::max<int64_t>(1, microBatch), train.size());
  const auto images = train.batch(data::indexRange(0, rows)).inputs;
  // In turns: workers sharing a machine would otherwise time each other's load, and unequally (over a
  // second the scheduler does not share two cores fairly among four processes: equal workers profiled at
  // once differed by 2.7x in bench/partition_scenarios.sh P3). The live re-partition rescales each node's
  // costs by what training measures, so an unloaded profile's level is corrected; its shape is what counts.
  pipeline::BlockTimes times;
  for (int turn = 0; turn < world.size(); ++turn) {
    if (turn == world.rank()) times = pipeline::profileBlocks(net, images);
    world.barrier();
  }
  const double slowdown = c.emulation.slowdown.empty() ? 1.0 : c.emulation.slowdown.at(0, world.rank());
  pipeline::PlanInput input = jobPlanInput(c, blocks);
  input.nodes = pipeline::gatherNodeCosts(world, times, slowdown, c.memoryLimitMbOf(world.rank()) * kBytesPerMb);
  input.links = pipeline::measureLinks(world);
  return input;
}

// Rank 0's plan to every rank, as one int64 tensor whose length every rank knows from S and N:
// [ok, S x (first, end), N slot ranks, R shares]. ok = 0: rank 0 could not plan (and throws its own error).
pipeline::Placement broadcastPlan(comm::Communicator& world, int stages, const pipeline::Placement* planned) {
  const int n = world.size(), replicas = n / stages;
  auto message = at::zeros({1 + 2 * stages + n + replicas}, at::kLong);
  auto* m = message.data_ptr<int64_t>();
  if (planned) {
    m[0] = 1;
    for (int s = 0; s < stages; ++s) {
      m[1 + 2 * s] = static_cast<int64_t>(planned->partition.stages[s].first);
      m[2 + 2 * s] = static_cast<int64_t>(planned->partition.stages[s].end);
    }
    for (int slot = 0; slot < n; ++slot) m[1 + 2 * stages + slot] = planned->slotRanks[slot];
    for (int j = 0; j < replicas; ++j) m[1 + 2 * stages + n + j] = planned->shares[j];
  }
  std::vector<at::Tensor> one{message};
  world.broadcast(one, 0);
  m = one[0].data_ptr<int64_t>();
  if (m[0] != 1) throw UsageError("worker 0 could not plan the placement (its error says why)");
  if (planned) return *planned;
  pipeline::Placement placement;
  placement.stages = stages;
  placement.replicas = replicas;
  for (int s = 0; s < stages; ++s)
    placement.partition.stages.push_back({static_cast<size_t>(m[1 + 2 * s]), static_cast<size_t>(m[2 + 2 * s])});
  placement.slotRanks.assign(m + 1 + 2 * stages, m + 1 + 2 * stages + n);
  placement.shares.assign(m + 1 + 2 * stages + n, m + 1 + 2 * stages + n + replicas);
  return placement;
}

pipeline::Placement planOnRankZero(const JobConfig& c, comm::Communicator& world, const pipeline::PlanInput& input) {
  const int stages = c.pipeline.stages;
  if (world.rank() != 0) return broadcastPlan(world, stages, nullptr);
  pipeline::Placement planned;
  std::exception_ptr failure;
  try {
    pipeline::PlanRequest request;
    request.stages = stages;
    planned = pipeline::planPlacement(input, request);
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure) return broadcastPlan(world, stages, &planned);
  try {
    broadcastPlan(world, stages, nullptr);  // tells the others (ok = 0), who stop with a UsageError
  } catch (const UsageError&) {
  }
  std::rethrow_exception(failure);  // this rank's own error: the one line the launcher shows
}

}  // namespace

int microBatchesOf(const JobConfig& c) {
  return c.pipeline.microBatches > 0 ? c.pipeline.microBatches : kDefaultMicroBatchesPerStage * c.pipeline.stages;
}

pipeline::Partition givenPartition(const JobConfig& c, const std::vector<models::BlockInfo>& blocks) {
  const auto& p = c.pipeline;
  if (p.partition == "uniform") return pipeline::Partition::uniform(blocks.size(), p.stages);
  if (p.partition == "flops") return pipeline::equalFlopsPartition(blocks, p.stages);
  return pipeline::Partition::parse(p.partition, blocks.size(), p.stages);
}

pipeline::PlanInput jobPlanInput(const JobConfig& c, const std::vector<models::BlockInfo>& blocks) {
  pipeline::PlanInput input;
  input.blocks = blocks;
  input.globalBatch = c.trainer.globalBatch;
  input.microBatches = microBatchesOf(c);
  input.schedule = pipeline::parseScheduleKind(c.pipeline.schedule);
  input.optimizer = c.trainer.optimizer.name;
  return input;
}

StagePlacement placeStages(const JobConfig& c, comm::Communicator& world, models::Network& net,
                           const data::Dataset& train) {
  const auto blocks = net.blocks();
  StagePlacement result;
  if (c.pipeline.planned() || c.pipeline.explainPartition) result.profile = measure(c, world, net, train, blocks);
  if (c.pipeline.planned()) {
    result.placement = planOnRankZero(c, world, *result.profile);
    return result;
  }
  auto& p = result.placement;
  p.stages = c.pipeline.stages;
  p.replicas = world.size() / p.stages;
  p.microBatches = microBatchesOf(c);
  p.partition = givenPartition(c, blocks);
  for (int rank = 0; rank < world.size(); ++rank) p.slotRanks.push_back(rank);
  p.shares = c.split.batches;
  p.method = "given";
  if (result.profile && world.rank() == 0) p = pipeline::predict(*result.profile, p);
  return result;
}

}  // namespace balancenet::worker

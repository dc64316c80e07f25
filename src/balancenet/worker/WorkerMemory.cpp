// WorkerMemory: the footprint from the model's estimate, the budget from the flags or the GPU, PassFit's answer.
#include "balancenet/worker/WorkerMemory.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceWork.h"
#include "balancenet/memory/PassFit.h"
#include "balancenet/memory/StateSlices.h"
#include "balancenet/pipeline/MemoryEstimate.h"
#include "balancenet/recompute/RecomputeMemory.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::worker {
namespace {

constexpr double kMiBytes = 1024.0 * 1024.0;
// Of a GPU's memory, what a pass may plan on: the CUDA context, the caching allocator's rounding and the
// exchange's buffers take the rest (the policies' share of free memory is the same, orchestrator/NodeReport).
constexpr double kUsableGpuShare = 0.8;

double budgetBytes(const job::JobConfig& c, int member, c10::Device device) {
  if (member >= 0 && member < static_cast<int>(c.memoryLimitMb.size()) && c.memoryLimitMb[member] > 0)
    return c.memoryLimitMb[member] * kMiBytes;
  if (device.is_cuda()) return kUsableGpuShare * static_cast<double>(device::deviceMemory(device).totalBytes);
  return 0;
}

// The parameter and its gradient, float32: what every worker holds of every parameter, sharded or not.
constexpr int64_t kReplicatedBytesPerParameter = 8;

}  // namespace

std::vector<int64_t> stateSlicesOf(const job::JobConfig& c, int64_t parameters, int world) {
  std::vector<double> rooms;
  for (int r = 0; r < world; ++r) {
    const double cap = c.memoryLimitMbOf(r) * kMiBytes;
    // 0: no cap known, which StateSlices counts as the largest room given.
    rooms.push_back(cap > 0 ? std::max(1.0, cap - static_cast<double>(parameters * kReplicatedBytesPerParameter)) : 0);
  }
  return memory::stateSlices(parameters, rooms);
}

int64_t stateBytesOf(const job::JobConfig& c, int64_t parameters, int rank, int world) {
  const int64_t perParameter = pipeline::stateBytesPerParameter(c.trainer.optimizer.name);
  if (!c.trainer.shardState) return parameters * perParameter;
  const auto slices = stateSlicesOf(c, parameters, world);
  return parameters * kReplicatedBytesPerParameter + slices.at(rank) * (perParameter - kReplicatedBytesPerParameter);
}

namespace {

// The share a worker starts with: the one the decision on recomputation is made for (it stays for the run).
int64_t firstShare(const job::JobConfig& c, int member, int world) {
  if (member >= 0 && member < static_cast<int>(c.split.batches.size())) return c.split.batches[member];
  return c.trainer.globalBatch / std::max(1, world);
}

static_assert(trainer::kAccumulateAuto == 0, "recompute::recomputePays reads 0 micro-steps as --accumulate auto");

bool recomputes(const job::JobConfig& c, size_t blockCount, int64_t share, int64_t plainPerPass,
                int64_t recomputedPerPass) {
  switch (c.trainer.recompute) {
    case recompute::RecomputeMode::None:
      return false;
    case recompute::RecomputeMode::Blocks:
      return true;  // a model of one block is refused where the forward is built (RecomputedForward)
    case recompute::RecomputeMode::Auto:
      return blockCount >= 2 && recompute::recomputePays(share, plainPerPass, recomputedPerPass, c.trainer.accumulate);
  }
  return false;
}

}  // namespace

WorkerPasses workerPasses(const job::JobConfig& c, int member, const models::BuiltModel& model, c10::Device device) {
  const auto blocks = model.net->blocks();
  const auto whole = pipeline::estimateStageMemory(blocks, {0, blocks.size()}, /*microBatch=*/1, /*inFlight=*/1,
                                                   c.trainer.optimizer.name);
  const int64_t parameters = model.info.parameters;  // what --shard-state slices: every element of every tensor
  const int world = c.worker ? c.worker->worldSize : c.split.worldSize();
  const int64_t state = member >= 0 && member < world ? stateBytesOf(c, parameters, member, world) : whole.stateBytes;
  const memory::WorkerFootprint plain{state, whole.activationBytes};
  const memory::WorkerFootprint recomputed{state, recompute::recomputedBytesPerSample(blocks)};
  const double budget = budgetBytes(c, member, device);
  WorkerPasses passes;
  passes.samplesPerPassWithout = memory::samplesPerPass(plain, budget);
  const int64_t recomputedPerPass = memory::samplesPerPass(recomputed, budget);
  passes.recompute =
      recomputes(c, blocks.size(), firstShare(c, member, world), passes.samplesPerPassWithout, recomputedPerPass);
  passes.samplesPerPass = passes.recompute ? recomputedPerPass : passes.samplesPerPassWithout;
  if (passes.samplesPerPass == 0)
    throw UsageError(fmt::format(
        "worker {} has {:.1f} MiB for training, which holds the model's state ({:.1f} MiB with {}) but not one "
        "sample more ({:.2f} MiB each{}): give it more memory, {}or train with --pipeline-stages",
        member, budget / kMiBytes, plain.stateBytes / kMiBytes, c.trainer.optimizer.name,
        (passes.recompute ? recomputed : plain).bytesPerSample / kMiBytes, passes.recompute ? ", recomputed" : "",
        !passes.recompute && recomputedPerPass > 0 ? "try --recompute auto, " : ""));
  if (budget <= 0) return passes;
  passes.shareCap = c.trainer.accumulate == trainer::kAccumulateAuto
                        ? memory::kUnlimited
                        : memory::shareCapFor(c.trainer.accumulate, passes.samplesPerPass);
  return passes;
}

}  // namespace balancenet::worker

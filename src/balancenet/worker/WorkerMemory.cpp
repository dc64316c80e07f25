// WorkerMemory: the footprint from the model's estimate, the budget from the flags or the GPU, PassFit's answer.
#include "balancenet/worker/WorkerMemory.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceWork.h"
#include "balancenet/memory/PassFit.h"
#include "balancenet/memory/StateSlices.h"
#include "balancenet/pipeline/MemoryEstimate.h"
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

WorkerPasses workerPasses(const job::JobConfig& c, int member, const models::BuiltModel& model, c10::Device device) {
  const auto blocks = model.net->blocks();
  const auto whole = pipeline::estimateStageMemory(blocks, {0, blocks.size()}, /*microBatch=*/1, /*inFlight=*/1,
                                                   c.trainer.optimizer.name);
  const int64_t parameters = model.info.parameters;  // what --shard-state slices: every element of every tensor
  const int world = c.worker ? c.worker->worldSize : c.split.worldSize();
  const int64_t state = member >= 0 && member < world ? stateBytesOf(c, parameters, member, world) : whole.stateBytes;
  const memory::WorkerFootprint footprint{state, whole.activationBytes};
  const double budget = budgetBytes(c, member, device);
  WorkerPasses passes;
  passes.samplesPerPass = memory::samplesPerPass(footprint, budget);
  if (passes.samplesPerPass == 0)
    throw UsageError(fmt::format(
        "worker {} has {:.1f} MiB for training, which holds the model's state ({:.1f} MiB with {}) but not one "
        "sample more ({:.2f} MiB each): give it more memory, or train with --pipeline-stages",
        member, budget / kMiBytes, footprint.stateBytes / kMiBytes, c.trainer.optimizer.name,
        footprint.bytesPerSample / kMiBytes));
  if (budget <= 0) return passes;
  passes.shareCap = c.trainer.accumulate == trainer::kAccumulateAuto
                        ? memory::kUnlimited
                        : memory::shareCapFor(c.trainer.accumulate, passes.samplesPerPass);
  return passes;
}

}  // namespace balancenet::worker

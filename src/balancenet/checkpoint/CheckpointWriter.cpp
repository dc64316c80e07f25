#include "balancenet/checkpoint/CheckpointWriter.h"

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "balancenet/checkpoint/RandomState.h"
#include "balancenet/core/Stopwatch.h"

namespace balancenet::checkpoint {

CheckpointWriter::CheckpointWriter(CheckpointStore& store, RunIdentity run, int64_t every)
    : store_(store), run_(std::move(run)), every_(every) {
  if (every_ < 1) throw UsageError(fmt::format("--checkpoint-every must be at least 1, got {}", every_));
}

void CheckpointWriter::afterStep(trainer::StepEngine& engine, int64_t totalSteps) {
  const int64_t done = engine.stepsDone();
  if (done % every_ == 0 || done == totalSteps) save(engine);
}

std::string CheckpointWriter::save(trainer::StepEngine& engine) {
  Stopwatch watch;
  auto& comm = engine.world();
  // Dropout masks differ per rank, so every rank's generator is kept, not only rank 0's; a GPU rank's GPU one too.
  auto rng = comm.allgatherText(localRandomState());
  auto gpuRng = comm.allgatherText(localGpuRandomState(engine.device()));
  auto state = engine.checkpointState();
  // Each rank's exchange state (error feedback) is its own, as its generator is; none in an exact job.
  auto syncState = comm.allgatherText(
      state.training.syncState.empty() ? std::string() : trainer::tensorsToBytes(state.training.syncState));
  if (comm.rank() != 0) return "";
  Checkpoint c;
  c.run = run_;
  c.run.worldSize = comm.size();  // after a membership change: the split and node models are this many workers'
  c.step = engine.stepsDone();
  state.training.rng = at::Tensor();  // kept per rank in c.rng and c.gpuRng
  state.training.gpuRng = at::Tensor();
  c.training = trainer::toBytes(state.training);
  c.allocator = std::move(state.allocator);
  c.rng = std::move(rng);
  const bool anyState =
      std::any_of(syncState.begin(), syncState.end(), [](const std::string& bytes) { return !bytes.empty(); });
  if (anyState) c.syncState = std::move(syncState);  // an exact job's checkpoint stays as it was
  const bool anyGpu =
      std::any_of(gpuRng.begin(), gpuRng.end(), [](const std::string& bytes) { return !bytes.empty(); });
  if (anyGpu) c.gpuRng = std::move(gpuRng);  // a CPU job's checkpoint stays as it was
  const double stateMs = watch.elapsedMs();
  const std::string path = store_.write(c);
  spdlog::info("checkpoint {} written ({:.1f} MB, {:.0f} ms: state {:.0f} ms, file {:.0f} ms)", path,
               static_cast<double>(std::filesystem::file_size(path)) / 1e6, watch.elapsedMs(), stateMs,
               watch.elapsedMs() - stateMs);
  return path;
}

}  // namespace balancenet::checkpoint

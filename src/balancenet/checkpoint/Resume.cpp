#include "balancenet/checkpoint/Resume.h"

#include <ATen/ATen.h>

#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/checkpoint/RandomState.h"

namespace balancenet::checkpoint {

std::vector<std::string> checkResumable(const StoredCheckpoint& stored, const RunIdentity& run, int64_t steps) {
  const Checkpoint& c = stored.checkpoint;
  const std::string diff = c.run.signature.difference(run.signature);
  if (!diff.empty())
    throw UsageError(fmt::format("--resume: {} is a checkpoint of {}, this run trains {} ({})", stored.path,
                                 c.run.signature.describe(), run.signature.describe(), diff));
  if (c.run.engine != run.engine)
    throw UsageError(
        fmt::format("--resume: {} is a checkpoint of a {} run, this run is {}: resume it with the same "
                    "--pipeline-stages",
                    stored.path, c.run.engine, run.engine));
  if (c.run.optimizer != run.optimizer)
    throw UsageError(fmt::format("--resume: {} was trained with --optimizer {}, this run uses {}", stored.path,
                                 c.run.optimizer, run.optimizer));
  if (c.step >= steps)
    throw UsageError(
        fmt::format("--resume: {} is at step {}, already at --steps {} (the total): raise --steps to "
                    "train further",
                    stored.path, c.step, steps));
  std::vector<std::string> warnings;
  if (c.run.worldSize != run.worldSize)
    warnings.push_back(
        fmt::format("{} was written by {} workers, this run has {}: the split starts from --split "
                    "(or equal) and the policy's per-worker cost models start afresh",
                    stored.path, c.run.worldSize, run.worldSize));
  if (c.run.globalBatch != run.globalBatch)
    warnings.push_back(fmt::format("{} was trained with --global-batch {}, this run uses {}", stored.path,
                                   c.run.globalBatch, run.globalBatch));
  if (c.run.seed != run.seed)
    warnings.push_back(fmt::format("{} was trained with --seed {}, this run uses {}: the data order changes",
                                   stored.path, c.run.seed, run.seed));
  return warnings;
}

StoredCheckpoint findResumable(const CheckpointStore& store, const RunIdentity& run, int64_t steps,
                               const CheckpointStore::Warn& warn) {
  auto found = store.newestGood(warn);
  if (!found) {
    const auto files = store.files();
    if (files.empty()) throw UsageError(fmt::format("--resume: no checkpoint in {}", store.dir()));
    throw UsageError(fmt::format("--resume: none of the {} checkpoints in {} is intact", files.size(), store.dir()));
  }
  for (const auto& w : checkResumable(*found, run, steps))
    if (warn) warn(w);
  return std::move(*found);
}

void requireNoCheckpoints(const CheckpointStore& store) {
  const auto files = store.files();
  if (!files.empty())
    throw UsageError(
        fmt::format("--checkpoint-dir {} already holds checkpoints (newest {}): add --resume to "
                    "continue from them, or choose another directory",
                    store.dir(), files.front()));
}

int64_t resume(trainer::StepEngine& engine, int64_t totalSteps, const CheckpointStore& store, const RunIdentity& run,
               const CheckpointStore::Warn& warn) {
  auto& comm = engine.world();
  std::string bytes, path, error;
  if (comm.rank() == 0) {
    try {
      auto found = findResumable(store, run, totalSteps, warn);
      path = found.path;
      bytes = encode(found.checkpoint);
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  // Rank 0 reads, everyone receives: the checkpoint directory need only exist on rank 0's machine.
  std::vector<at::Tensor> size{at::full({1}, error.empty() ? static_cast<int64_t>(bytes.size()) : -1, at::kLong)};
  comm.broadcast(size, 0);
  const int64_t n = size[0].item<int64_t>();
  if (n < 0) {
    if (comm.rank() == 0) throw UsageError(error);
    throw RuntimeFailure("rank 0 could not resume (see its error)");
  }
  std::vector<at::Tensor> data{at::empty({n}, at::kByte)};
  if (comm.rank() == 0) std::memcpy(data[0].data_ptr<uint8_t>(), bytes.data(), bytes.size());
  comm.broadcast(data, 0);
  const Checkpoint c = decode(std::string(reinterpret_cast<const char*>(data[0].data_ptr<uint8_t>()), n));

  trainer::EngineCheckpoint state{trainer::fromBytes(c.training), c.allocator};
  const int rank = comm.rank();
  // Ranks the checkpoint did not have keep the generator as seeded.
  state.training.rng = rank < static_cast<int>(c.rng.size()) ? randomStateFromBytes(c.rng[rank]) : at::Tensor();
  state.training.gpuRng =
      rank < static_cast<int>(c.gpuRng.size()) ? randomStateFromBytes(c.gpuRng[rank]) : at::Tensor();
  if (rank < static_cast<int>(c.syncState.size()) && !c.syncState[rank].empty())
    state.training.syncState = trainer::tensorsFromBytes(c.syncState[rank]);
  engine.restoreCheckpoint(state, c.run.worldSize == comm.size());
  if (rank == 0) spdlog::info("resumed from {} at step {} of {}", path, c.step, totalSteps);
  return c.step;
}

}  // namespace balancenet::checkpoint

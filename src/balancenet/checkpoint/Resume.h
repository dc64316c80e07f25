// Resuming: which checkpoint a run may continue from, and continuing from it on every rank.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/trainer/StepEngine.h"

namespace balancenet::checkpoint {

// Throws UsageError (one line) when the run cannot continue from `stored`: another model (naming both),
// another optimiser, or nothing left to train (its step >= steps). Returns warnings for what is allowed but
// changes the run: another world size (the split and the policy's node models start afresh), another
// global batch or seed.
std::vector<std::string> checkResumable(const StoredCheckpoint& stored, const RunIdentity& run, int64_t steps);

// The newest intact checkpoint of `store` that this run may continue from (damaged newer ones reported to
// `warn`). Throws UsageError when there is none or it does not fit the run; warnings go to `warn`.
StoredCheckpoint findResumable(const CheckpointStore& store, const RunIdentity& run, int64_t steps,
                               const CheckpointStore::Warn& warn);

// Throws UsageError when `store` already holds checkpoint files: a run without --resume must not mix
// its checkpoints with (and prune) another run's.
void requireNoCheckpoints(const CheckpointStore& store);

// Collective over the engine's world. Rank 0 finds the checkpoint (findResumable, for a run of `totalSteps`)
// and broadcasts it; every rank restores the model, optimiser, data position, its own RNG state and (same
// world size only) the allocator's state. Returns the step resumed at. On rank 0's failure every rank
// throws: rank 0 its UsageError.
int64_t resume(trainer::StepEngine& engine, int64_t totalSteps, const CheckpointStore& store, const RunIdentity& run,
               const CheckpointStore::Warn& warn);

}  // namespace balancenet::checkpoint

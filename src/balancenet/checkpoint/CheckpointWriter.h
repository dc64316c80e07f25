// CheckpointWriter: a trainer::StepBoundary that saves a checkpoint every N steps and after the last
// step, for any engine. Collective: every rank contributes its RNG state and the engine gathers its state
// to rank 0, which writes the file. The group is the engine's at each save, so the writer outlives
// membership changes.
#pragma once
#include <cstdint>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/trainer/StepEngine.h"

namespace balancenet::checkpoint {

class CheckpointWriter : public trainer::StepBoundary {
 public:
  // `store` is written by rank 0 only; `every` >= 1.
  // `run.worldSize` is replaced by the group's size at each save.
  CheckpointWriter(CheckpointStore& store, RunIdentity run, int64_t every);
  void afterStep(trainer::StepEngine& engine, int64_t totalSteps) override;
  // Saves now, whatever the step (collective). Returns the path on rank 0, empty elsewhere.
  std::string save(trainer::StepEngine& engine);

 private:
  CheckpointStore& store_;
  RunIdentity run_;
  int64_t every_;
};

}  // namespace balancenet::checkpoint

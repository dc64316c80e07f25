// CheckpointWriter: a trainer::StepBoundary that saves a checkpoint every N steps and after the last
// step. Collective: every rank contributes its RNG state; rank 0 gathers the rest and writes the file.
// The group and the allocator are the trainer's at each save, so the writer outlives membership changes.
#pragma once
#include <cstdint>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/trainer/Trainer.h"

namespace balancenet::checkpoint {

class CheckpointWriter : public trainer::StepBoundary {
 public:
  // `store` is written by rank 0 only; `every` >= 1.
  // `run.worldSize` is replaced by the group's size at each save.
  CheckpointWriter(CheckpointStore& store, RunIdentity run, int64_t every);
  void afterStep(trainer::Trainer& trainer) override;
  // Saves now, whatever the step (collective). Returns the path on rank 0, empty elsewhere.
  std::string save(trainer::Trainer& trainer);

 private:
  CheckpointStore& store_;
  RunIdentity run_;
  int64_t every_;
};

}  // namespace balancenet::checkpoint

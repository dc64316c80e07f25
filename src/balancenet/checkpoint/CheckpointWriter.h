// CheckpointWriter: a trainer::StepBoundary that saves a checkpoint every N steps and after the last
// step. Collective: every rank contributes its RNG state; rank 0 gathers the rest and writes the file.
#pragma once
#include <cstdint>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/trainer/Trainer.h"

namespace balancenet::checkpoint {

class CheckpointWriter : public trainer::StepBoundary {
 public:
  // `store` is written by rank 0 only; `every` >= 1.
  CheckpointWriter(CheckpointStore& store, RunIdentity run, int64_t every, orchestrator::Allocator& allocator);
  void afterStep(trainer::Trainer& trainer) override;
  // Saves now, whatever the step (collective). Returns the path on rank 0, empty elsewhere.
  std::string save(trainer::Trainer& trainer);

 private:
  CheckpointStore& store_;
  RunIdentity run_;
  int64_t every_;
  orchestrator::Allocator& allocator_;
};

}  // namespace balancenet::checkpoint

// Checkpoint wiring of a job: the launcher's check before any worker starts (one clear error, nothing
// touched), and each worker's writer and resume. The format and the rules live in checkpoint/.
#pragma once
#include <memory>
#include <optional>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/checkpoint/CheckpointWriter.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/models/Network.h"
#include "balancenet/trainer/StepEngine.h"
#include "balancenet/trainer/TrainingState.h"

namespace balancenet::worker {

// With --resume: an intact checkpoint of this model, optimiser and a step below --steps must exist
// (damaged newer ones and allowed differences are warned about). Without: the directory must hold no
// checkpoints. Throws UsageError; reads only. Nothing to do without --checkpoint-dir.
void preflightCheckpoints(const job::JobConfig& c);

class WorkerCheckpoints {
 public:
  // Nothing happens without --checkpoint-dir.
  WorkerCheckpoints(const job::JobConfig& c, comm::Communicator& comm, const models::Network& net);
  ~WorkerCheckpoints();
  // Registers the writer (every --checkpoint-every steps and after the last).
  void addTo(std::vector<trainer::StepBoundary*>& boundaries);
  // With --resume: continues `engine` from the newest intact checkpoint (collective).
  void resumeIfAsked(trainer::StepEngine& engine);
  // The training state of the newest intact checkpoint this worker can read (nothing without --checkpoint-dir or
  // a checkpoint): where an elastic --shard-state group goes back to when a member dies (this worker alone).
  std::optional<trainer::TrainingState> newestState() const;

 private:
  const job::JobConfig& config_;
  checkpoint::RunIdentity run_;
  std::unique_ptr<checkpoint::CheckpointStore> store_;
  std::unique_ptr<checkpoint::CheckpointWriter> writer_;
};

}  // namespace balancenet::worker

// Trainer: the data-parallel step loop. It receives a split each step and knows nothing of policies.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>

#include "balancenet/comm/Communicator.h"
#include "balancenet/comm/GradientSync.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/metrics/Efficiency.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepRecord.h"
#include "balancenet/models/Network.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/trainer/LrSchedule.h"
#include "balancenet/trainer/OptimizerFactory.h"
#include "balancenet/trainer/TrainingState.h"

namespace balancenet::trainer {

struct TrainerOptions {
  int64_t steps = 1000;
  int64_t globalBatch = 128;
  uint64_t seed = 1;  // data order; the model's initial weights come from rank 0
  LrSchedule lr;
  OptimizerOptions optimizer;
  int64_t evalEvery = 0;  // 0: evaluate only at the end
  bool evalAtEnd = true;
  double progressSeconds = 5;         // rank 0 prints a progress line this often; 0: never
  std::string runDir;                 // where steps.csv and summary.json go; empty: nowhere
  std::string modelName;              // for the summary
  std::string timelinePath;           // rank 0 writes every rank's Chrome trace here; empty: no timeline
  bool broadcastInitialModel = true;  // false: a joining worker, whose state arrives by restoreState
  metrics::WorkerCapacity capacity;   // this worker's sgemm peak, for the achieved fraction of it; zero: not reported
};

class Trainer;

// Work between steps that is not training (checkpoints, membership changes): run() calls every
// boundary after each step, on every rank, in the same order, so a boundary may be collective.
class StepBoundary {
 public:
  virtual ~StepBoundary() = default;
  virtual void afterStep(Trainer& trainer) = 0;
};

// What run() does when a step, a boundary or an evaluation throws (a peer died, a collective timed
// out). recover() either throws (the run ends) or returns after it has rewired the trainer to a new
// group and restored a committed state: run() then goes on from trainer.stepsDone().
class FailureRecovery {
 public:
  virtual ~FailureRecovery() = default;
  virtual void recover(Trainer& trainer, const std::exception& failure) = 0;
};

// What the trainer works with; the caller owns all of it and wires the strategy choices in.
struct TrainerParts {
  models::Network& net;
  const data::MnistDataset& train;
  const data::MnistDataset* test;  // null: no evaluation
  comm::Communicator& comm;
  comm::GradientSync& sync;
  orchestrator::Allocator& allocator;
  std::vector<StepBoundary*> boundaries{};
  FailureRecovery* recovery = nullptr;  // null: a failure ends run() with the exception
};

class Trainer {
 public:
  // Broadcasts rank 0's parameters and buffers so every rank starts from the same model.
  Trainer(TrainerOptions options, TrainerParts parts);
  ~Trainer();

  // One global step: this rank's slice forward/backward, weighted sync, optimiser update.
  metrics::StepRecord step();
  // All steps with evaluation, progress lines and (rank 0) the run outputs.
  metrics::RunSummary run();

  int64_t stepsDone() const { return step_; }
  int64_t totalSteps() const { return options_.steps; }
  // The current group's parts (another group's after a membership change): ask again each time.
  comm::Communicator& communicator() const { return parts_->comm; }
  orchestrator::Allocator& allocator() const { return parts_->allocator; }
  // A copy of everything the next step depends on (this rank's view; every rank's is the same but rng).
  TrainingState captureState() const;
  // Continues from `state` as if the steps before it had been taken here (model, optimiser, data order).
  void restoreState(const TrainingState& state);
  std::vector<at::Tensor> parameters() const;
  // Continues on another group (membership changed): the parts are the new group's; the model and
  // the data stay. Call restoreState() after it: a failed step may have left partial updates.
  void rewire(comm::Communicator& comm, comm::GradientSync& sync, orchestrator::Allocator& allocator);

 private:
  metrics::EvalPoint evaluateNow(double trainSeconds);
  void recoverFrom(const std::exception& failure, std::vector<metrics::StepRecord>& records,
                   std::vector<metrics::EvalPoint>& evals);
  void logLayerTraffic(const std::vector<comm::LayerTraffic>& layers);

  TrainerOptions options_;
  std::optional<TrainerParts> parts_;  // references: re-seated by rewire()
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  data::GlobalPermutationSampler sampler_;
  int64_t step_ = 0;
  int64_t position_ = 0;                // sampler stream position of the next step's first sample
  int64_t samples_ = 0;                 // samples trained in all steps so far
  Split lastSplit_;                     // the split of the last step taken
  std::unique_ptr<Timeline> timeline_;  // only with options.timelinePath
  std::string layerTrafficCsv_;         // this rank's rows of layers.csv
};

}  // namespace balancenet::trainer

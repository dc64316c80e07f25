// Trainer: the data-parallel engine. Each step it takes the allocator's split, trains this rank's share and
// synchronises the weighted gradients; it knows nothing of policies, and the run loop (RunLoop) drives it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Collectives.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/models/Network.h"
#include "balancenet/objective/Objective.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/precision/LossScaler.h"
#include "balancenet/recompute/RecomputedForward.h"
#include "balancenet/trainer/StepEngine.h"
#include "balancenet/trainer/TrainerOptions.h"
#include "balancenet/trainer/TrainingState.h"

namespace balancenet::trainer {

class ShardedState;  // trainer/ShardedState.h

class BatchPrefetcher;

// What the trainer works with; the caller owns all of it and wires the strategy choices in.
struct TrainerParts {
  models::Network& net;
  const data::Dataset& train;
  const data::Dataset* test;  // null: no evaluation
  const objective::Objective& objective;
  comm::Collectives& comm;
  comm::GradientSync& sync;
  orchestrator::Allocator& allocator;
};

class Trainer : public StepEngine {
 public:
  // Broadcasts rank 0's parameters and buffers so every rank starts from the same model.
  Trainer(TrainerOptions options, TrainerParts parts);
  ~Trainer() override;

  // One global step: this rank's slice forward/backward, weighted sync, optimiser update.
  metrics::StepRecord step() override;
  bool canEvaluate() const override { return parts_->test != nullptr; }
  // BatchNorm running statistics are rank 0's, as DDP's are.
  metrics::EvalPoint evaluate() override;
  int64_t stepsDone() const override { return step_; }
  int64_t samplesDone() const override { return samples_; }
  const Split& lastSplit() const override { return lastSplit_; }
  // The current group's parts (another group's after a membership change): ask again each time.
  comm::Collectives& world() const override { return parts_->comm; }
  EngineCheckpoint checkpointState() override;
  void restoreCheckpoint(const EngineCheckpoint& checkpoint, bool sameWorld) override;
  c10::Device device() const override { return device_; }
  // Images that could not be decoded and were replaced (all ranks), and how often a read ahead was right.
  void describe(metrics::RunSummary& summary) override;
  // layers.csv and the timeline.
  void writeOutputs(const std::string& runDir) override;

  // A copy of everything the next step depends on (this rank's view; every rank's is the same but the generators).
  // Not under --shard-state, where a worker holds its slice of the optimiser state only: see jobState().
  TrainingState captureState() const;
  bool shardsState() const { return sharded_ != nullptr; }
  // The job's whole state on rank 0 (nothing elsewhere), as a replicated optimiser would hold it: under
  // --shard-state a collective that gathers every worker's slice.
  std::optional<TrainingState> jobState();
  // Continues from `state` as if the steps before it had been taken here (model, optimiser, data order).
  void restoreState(const TrainingState& state);
  std::vector<at::Tensor> parameters() const;
  // Continues on another group (membership changed): the parts are the new group's; the model and
  // the data stay. Call restoreState() after it: a failed step may have left partial updates.
  // `stateSlices`: under --shard-state the new group's slices (this worker's of them by its new rank).
  void rewire(comm::Collectives& comm, comm::GradientSync& sync, orchestrator::Allocator& allocator,
              std::vector<int64_t> stateSlices = {});

 private:
  // The state with `optimizer`'s serialisation (this trainer's, or under --shard-state a replicated one rebuilt
  // from every worker's slice).
  TrainingState stateWith(torch::optim::Optimizer& optimizer) const;
  // An optimiser over the whole parameters, as replicated training keeps: what sharded states are saved and read as.
  std::unique_ptr<torch::optim::Optimizer> replicatedOptimizer() const;
  struct Share;       // this rank's samples of a step, and how long it waited for them
  struct SyncedStep;  // what synchronising a step's gradients left

  // The phases of step(), in order.
  // The allocator's split of the step, validated; it becomes lastSplit_.
  Split allocate();
  // Reads this rank's share of the step and starts reading the next step's.
  Share readShare(const Split& split, int rank);
  // This rank's samples of the step at `position`: its share, or with a share of 0 the probe's (kProbeSamples).
  std::vector<data::Draw> drawsOf(int64_t position, const Split& split, int rank);
  // A left-out rank's probe gradient zeroed (it must add nothing to the sum); returns its local loss, 0.
  at::Tensor dropProbeGradient();
  static constexpr int64_t kProbeSamples = 1;
  // Forward and backward of the share, in micro-steps, with the sync armed before or after backward.
  // Returns the share's loss (its per-sample losses summed, over the global batch).
  // The micro-steps a share of `rows` samples runs in: --accumulate's, or under auto what the worker's memory needs.
  int64_t microStepCount(int64_t rows) const;
  at::Tensor computeGradients(const data::Batch& batch, int64_t globalBatch, const comm::SyncContext& context);
  // Sums every rank's gradient, and the scalars travelling with it (the loss; with `measuring`, the norms).
  SyncedStep synchronizeGradients(const at::Tensor& localLoss, const comm::SyncContext& context, int64_t globalBatch,
                                  bool measuring);
  // The optimiser step on the summed gradient, unless the sync already updated the parameters. False: fp16's
  // gradient overflowed and the step was skipped (the parameters are as they were).
  bool updateParameters(const std::vector<at::Tensor>& grads);
  // fp16: the summed gradient divided by the loss scale in place; false when it holds an inf or a NaN.
  bool unscaleGradients(const std::vector<at::Tensor>& grads);
  void logLayerTraffic(const std::vector<comm::LayerTraffic>& layers);
  // The step's row; its update time is the step's wall time so far.
  metrics::StepRecord recordOf(int rank, double dataMs, const comm::SyncContext& context, const SyncedStep& synced,
                               bool measuring, const Stopwatch& stepWatch) const;

  TrainerOptions options_;
  std::optional<TrainerParts> parts_;  // references: re-seated by rewire()
  std::vector<at::Tensor> params_;
  c10::Device device_{c10::DeviceType::CPU};                  // the model's, where this rank computes
  std::unique_ptr<torch::optim::Optimizer> optimizer_;        // over params_, or over sharded_'s slice
  std::unique_ptr<ShardedState> sharded_;                     // --shard-state only
  std::unique_ptr<recompute::RecomputedForward> recomputed_;  // where this worker recomputes its blocks
  int64_t gatheredBytes_ = 0;                                 // its all-gather's bytes in the step being taken
  std::optional<precision::LossScaler> scaler_;               // --precision fp16 only
  data::GlobalPermutationSampler sampler_;
  std::unique_ptr<BatchPrefetcher> prefetcher_;  // reads the next step's share ahead
  int64_t step_ = 0;
  int64_t position_ = 0;                // sampler stream position of the next step's first sample
  int64_t samples_ = 0;                 // samples trained in all steps so far
  Split lastSplit_;                     // the split of the last step taken
  std::unique_ptr<Timeline> timeline_;  // only with options.timelinePath
  std::string layerTrafficCsv_;         // this rank's rows of layers.csv
};

}  // namespace balancenet::trainer

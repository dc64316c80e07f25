// PipelineTrainer: the pipeline-parallel engine (the run loop, trainer::RunLoop, drives it). The model is
// cut into stages (one per rank of a column), each global batch flows through every column in
// micro-batches, and a flush ends each step: after it, parameters are what one process training the whole
// model on the whole batch would have.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <torch/optim/optimizer.h>

#include "balancenet/core/Stopwatch.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/models/Network.h"
#include "balancenet/objective/Objective.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/pipeline/Partition.h"
#include "balancenet/pipeline/PartitionController.h"
#include "balancenet/pipeline/PipelineGroups.h"
#include "balancenet/pipeline/ScheduleRunner.h"
#include "balancenet/trainer/StepEngine.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::comm {
class GradientSync;
struct SyncContext;
}  // namespace balancenet::comm

namespace balancenet::pipeline {

struct PipelineTrainerOptions {
  trainer::TrainerOptions trainer;  // steps, batch, seed, optimiser, evaluation, outputs (capacity unused)
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  int microBatches = 4;
  Partition partition;  // one range per stage
  // This rank's emulated slowdown at a step (each compute lasts that many times its real time); null: 1.
  std::function<double(int64_t step)> slowdown;
  // A PartitionController on rank 0 (PipelineParts::controller) sees every step's times and may move the
  // stage boundaries at the flush. The same on every rank: the others take part in gathering and moving.
  bool livePartition = false;
  // The steps' times reach the controller together every this many steps (its decision period): one
  // gather per decision rather than a collective on every step. Moves happen only at those steps.
  int partitionEvery = 1;
};

struct PipelineParts {
  models::Network& net;  // the whole model as built (same seed on every rank); this rank keeps its stage
  const data::Dataset& train;
  const data::Dataset* test;  // null: no evaluation
  const objective::Objective& objective;
  PipelineGroups& groups;
  // How the replicas of this rank's stage sum their gradients, over groups.stage (worker/SyncFactory's
  // makeStageSync, which follows --comm).
  comm::GradientSync& stageSync;
  // The split over the columns (one share per replica); used on stage 0, whose group it decides over,
  // and null elsewhere. The trainer broadcasts the decision down each column.
  orchestrator::Allocator* allocator;
  // Rank 0 with options.livePartition: decides the moves; null elsewhere.
  PartitionController* controller = nullptr;
};

class PipelineTrainer : public trainer::StepEngine {
 public:
  // Keeps this rank's stage and frees the rest of the model's tensors (memory is why one pipelines),
  // and makes the replicas of a stage start from replica 0's tensors.
  PipelineTrainer(PipelineTrainerOptions options, PipelineParts parts);
  ~PipelineTrainer() override;

  metrics::StepRecord step() override;
  bool canEvaluate() const override { return parts_.test != nullptr; }
  // Through the stages; BatchNorm running statistics are replica 0's.
  metrics::EvalPoint evaluate() override;
  int64_t stepsDone() const override { return step_; }
  int64_t samplesDone() const override { return samples_; }
  const Split& lastSplit() const override { return lastSplit_; }
  comm::Communicator& world() const override { return parts_.groups.world; }
  // The whole model's parameters and buffers in the network's order, with each parameter's optimiser state,
  // gathered to rank 0 from replica 0 of every stage: a checkpoint that does not depend on the partition.
  trainer::EngineCheckpoint checkpointState() override;
  // Each rank takes its stage's tensors and their optimiser state from the whole model's.
  void restoreCheckpoint(const trainer::EngineCheckpoint& checkpoint, bool sameWorld) override;
  // The pipeline's shape, bubble fractions and activation memory.
  void describe(metrics::RunSummary& summary) override;
  // pipeline.csv, the controller's outputs and the timeline.
  void writeOutputs(const std::string& runDir) override;
  std::string finalNote(const metrics::RunSummary& summary) const override;

  int stage() const { return parts_.groups.stageIndex(); }
  // Collective over the world, between steps: every stage runs `next`'s blocks from now on. A block changing
  // stage brings its parameters, buffers and optimiser state from its old stage's replica j to its new
  // stage's replica j (the replicas of a stage hold the same values), so training stays exact.
  void repartition(const Partition& next);
  const Partition& partition() const { return options_.partition; }

  // Collective over the world: rank 0's network gets every stage's parameters and buffers back
  // (from replica 0 of each stage), for --export and --save-params; other ranks' stay cut.
  void gatherModelToRankZero();

 private:
  struct ScheduledStep;  // what a step's schedule left on this rank
  struct SyncedStep;     // what synchronising a step's gradients over the stage left

  // The phases of step(), in order.
  // The column's split of the step: decided on the first stage, broadcast down the column (collective).
  Split columnSplit();
  // The step's input on this rank: micro-batch sizes, B, the slowdown, and at the first and last stages the
  // column's samples.
  StepInput prepareInput(const Split& split, int replica);
  // This stage's schedule for the step, then the column's flush; timed together as the step's span.
  ScheduledStep runSchedule(const StepInput& input);
  // Ends the schedule for the whole column: every rank learns its column's loss and each stage's compute.
  std::vector<double> flushColumn(double lossSum, double computeMs);
  // Sums the stage's gradients over its replicas, and the column's loss with them.
  SyncedStep synchronizeStage(double columnLoss, const comm::SyncContext& context);
  // The optimiser step; with --clip-grad-norm, clipped by the global norm (collective over the world).
  void updateParameters(const std::vector<at::Tensor>& grads);
  // The step's row; its update time is the step's wall time so far.
  metrics::StepRecord recordOf(const StepInput& input, const ScheduledStep& scheduled, const SyncedStep& synced,
                               const comm::SyncContext& context, const Stopwatch& stepWatch) const;
  // First stage: the allocator sees the column as fast as its slowest stage.
  void observeColumn(const metrics::StepRecord& record, const std::vector<double>& column);
  // After a step's update (options.livePartition): keeps this step's times; every options.partitionEvery
  // steps (collective) rank 0's controller sees every rank's compute times and the steps', and every rank
  // moves to the partition it answers, if any.
  void consultController(const Split& split, double computeMs, double stepMs);
  // pipeline.csv draws the last steps' actions only: the older ones go.
  void forgetOldSpans();

  // The activations entering this stage, per sample; empty at the first stage.
  std::vector<int64_t> stageInputShape() const;
  // Frees each of `candidates` that is not this rank's stage's (params_, buffers_), keeping its shape.
  void freeOtherStages(const std::vector<at::Tensor>& candidates);
  // Collective: rank 0 writes every rank's last actions as pipeline.csv.
  void writeSpans(const std::string& runDir);
  // repartition()'s last part on this rank, once the moved blocks' tensors are in place: its stage, optimiser
  // (kept parameters keep their state, arrived ones get `arrivedState`, by parameter) and runner follow the
  // current partition, and the tensors that left are freed.
  void rebuildStage(const std::unordered_map<const void*, std::vector<at::Tensor>>& arrivedState);
  // The tensors of block `block` (parameters, then buffers) as a re-partition sends them, with the
  // parameters' optimiser state.
  std::vector<at::Tensor> blockMessage(size_t block);
  // Receives block `block` from `src` into this rank's freed tensors; its parameters' state into `state`.
  void receiveBlock(size_t block, int src, std::unordered_map<const void*, std::vector<at::Tensor>>& state);

  PipelineTrainerOptions options_;
  PipelineParts parts_;
  std::vector<models::BlockInfo> blocks_;
  // Since the controller was last consulted: each step's times as this rank knows them (rank 0's step ms and
  // shares, this rank's compute ms), gathered at the next consultation.
  std::vector<StepTimes> unreported_;
  std::shared_ptr<models::BlockRange> stage_;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> buffers_;
  // The shapes other stages' tensors had before they were freed, by tensor: what gathering refills.
  std::unordered_map<const void*, std::vector<int64_t>> freedShapes_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<ScheduleRunner> runner_;
  Timeline::Clock::time_point origin_;  // rank 0's clock at the start: runners after a move keep it
  data::GlobalPermutationSampler sampler_;
  std::unique_ptr<Timeline> timeline_;
  std::vector<ActionSpan> spans_;  // the last steps' actions, for pipeline.csv
  int64_t step_ = 0;
  int64_t position_ = 0;
  int64_t samples_ = 0;
  Split lastSplit_;
  int64_t repartitions_ = 0;          // moves of the stage boundaries so far
  double bubbleMs_ = 0, spanMs_ = 0;  // summed over steps: this rank's bubble fraction
  double residentBeforeTraining_ = 0;
};

}  // namespace balancenet::pipeline

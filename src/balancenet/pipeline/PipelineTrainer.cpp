// The pipeline-parallel step loop. Exactness: the last stage's loss for each micro-batch is (sum of its
// per-sample losses) / B, so the gradients accumulated over a column's micro-batches are that column's
// share of the global-batch gradient, and the sum over a stage's replicas is the whole batch's.
#include "balancenet/pipeline/PipelineTrainer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/core/CpuStopwatch.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/metrics/ResourceProbe.h"
#include "balancenet/pipeline/MicroBatches.h"
#include "balancenet/pipeline/PipelineEvaluator.h"
#include "balancenet/trainer/GradientClipping.h"
#include "balancenet/trainer/OptimizerFactory.h"
#include "balancenet/trainer/RunOutputs.h"

namespace balancenet::pipeline {
namespace {

constexpr int64_t kStepsDrawn = 5;       // pipeline.csv keeps the actions of the last steps only
constexpr int kGatherTagBase = 1 << 29;  // above training and evaluation tags

Timeline::Clock::time_point sharedOrigin(comm::Communicator& world) {
  // Rank 0's steady clock: comparable between the processes of one machine, as the Timeline's is.
  const auto now = Timeline::Clock::now();
  std::vector<at::Tensor> origin{at::full({1}, static_cast<int64_t>(now.time_since_epoch().count()), at::kLong)};
  world.broadcast(origin, 0);
  return Timeline::Clock::time_point(Timeline::Clock::duration(origin[0].item<int64_t>()));
}

std::string spansCsv(const std::vector<ActionSpan>& spans, const PipelineGroups& g) {
  std::string rows;
  for (const auto& s : spans)
    rows += fmt::format("{},{},{},{},{},{},{:.3f},{:.3f}\n", s.step, g.world.rank(), g.stageIndex(), g.replica(),
                        s.action.kind == Action::Forward ? 'F' : 'B', s.action.micro, s.startMs, s.endMs);
  return rows;
}

}  // namespace

PipelineTrainer::PipelineTrainer(PipelineTrainerOptions options, PipelineParts parts)
    : options_(std::move(options)), parts_(parts), sampler_(parts.train.size(), options_.trainer.seed) {
  auto& g = parts_.groups;
  if (options_.partition.stageCount() != g.topology.stages)
    throw InternalError(fmt::format("a partition of {} stages for a pipeline of {}", options_.partition.stageCount(),
                                    g.topology.stages));
  if (g.firstStage() != (parts_.allocator != nullptr))
    throw InternalError("the allocator belongs to the first stage, and only there");
  if ((options_.livePartition && g.world.rank() == 0) != (parts_.controller != nullptr))
    throw InternalError("a partition controller belongs to rank 0 of a live partition, and only there");
  if (options_.partitionEvery < 1)
    throw InternalError(fmt::format("consulting the partition controller every {} steps", options_.partitionEvery));
  blocks_ = parts_.net.blocks();
  const auto range = options_.partition.stages.at(g.stageIndex());
  stage_ = parts_.net.blockRange(range.first, range.end);
  params_ = stage_->parameters();
  buffers_ = stage_->buffers();
  auto everyTensor = parts_.net.parameters();
  const auto everyBuffer = parts_.net.buffers();
  everyTensor.insert(everyTensor.end(), everyBuffer.begin(), everyBuffer.end());
  freeOtherStages(everyTensor);
  // Every rank built the model from the same seed; replica 0's tensors make sure of it.
  std::vector<at::Tensor> state = params_;
  state.insert(state.end(), buffers_.begin(), buffers_.end());
  if (g.topology.replicas > 1 && !state.empty()) g.stage->broadcast(state, 0);
  optimizer_ = trainer::makeOptimizer(options_.trainer.optimizer, params_, options_.trainer.lr.at(0));
  if (!options_.trainer.timelinePath.empty()) timeline_ = std::make_unique<Timeline>(g.world.rank());
  origin_ = sharedOrigin(g.world);
  runner_ = std::make_unique<ScheduleRunner>(g, *stage_, options_.schedule, stageInputShape(), origin_);
  stage_->train();
  residentBeforeTraining_ = metrics::residentBytes();
}

PipelineTrainer::~PipelineTrainer() = default;

std::vector<int64_t> PipelineTrainer::stageInputShape() const {
  const size_t first = options_.partition.stages.at(parts_.groups.stageIndex()).first;
  return first == 0 ? std::vector<int64_t>{} : blocks_.at(first - 1).outputShape;
}

void PipelineTrainer::freeOtherStages(const std::vector<at::Tensor>& candidates) {
  std::unordered_set<const void*> mine;
  for (const auto& t : params_) mine.insert(t.unsafeGetTensorImpl());
  for (const auto& t : buffers_) mine.insert(t.unsafeGetTensorImpl());
  at::NoGradGuard noGrad;
  for (auto t : candidates) {
    if (mine.count(t.unsafeGetTensorImpl())) continue;
    freedShapes_[t.unsafeGetTensorImpl()] = t.sizes().vec();
    t.set_data(at::empty({0}, t.options()));
    if (t.grad().defined()) t.mutable_grad() = at::Tensor();  // a block that moved away: its gradient too
  }
}

void PipelineTrainer::gatherModelToRankZero() {
  auto& g = parts_.groups;
  const int me = g.world.rank();
  // Rank 0 holds its own stage (stage 0's replica 0, unless ranks are placed in other slots); every other
  // stage's replica 0 sends it its tensors, in the network's order.
  const int kept = g.topology.stageOf(0);
  if (g.replica() == 0 && g.stageIndex() != kept) {
    int tag = 0;
    std::vector<at::Tensor> mine = params_;
    mine.insert(mine.end(), buffers_.begin(), buffers_.end());
    for (auto& t : mine) {
      auto c = t.detach().contiguous();
      g.world.send(c, 0, kGatherTagBase + tag++);
    }
  }
  if (me != 0) return;
  at::NoGradGuard noGrad;
  // Rank 0 learns which stage owns each freed tensor from the partition: the same block ranges cut the
  // same tensors on every rank, so it rebuilds each stage's list in that stage's own order.
  for (int s = 0; s < g.topology.stages; ++s) {
    if (s == kept) continue;
    const auto r = options_.partition.stages[s];
    auto other = parts_.net.blockRange(r.first, r.end);
    std::vector<at::Tensor> theirs = other->parameters();
    const auto b = other->buffers();
    theirs.insert(theirs.end(), b.begin(), b.end());
    int tag = 0;
    for (auto& t : theirs) {
      const auto shape = freedShapes_.find(t.unsafeGetTensorImpl());
      if (shape == freedShapes_.end()) throw InternalError("a stage's tensor was not among those freed on rank 0");
      auto full = at::empty(shape->second, t.options());
      g.world.recv(full, g.topology.rankOf(s, 0), kGatherTagBase + tag++);
      t.set_data(full);
    }
  }
}

Split PipelineTrainer::columnSplit() {
  auto& g = parts_.groups;
  const int columns = g.topology.replicas;
  at::Tensor shares = at::empty({columns}, at::kLong);
  if (g.firstStage()) {
    const Split decided = parts_.allocator->splitFor(step_);
    decided.validate(columns, decided.total());
    std::copy(decided.batches.begin(), decided.batches.end(), shares.data_ptr<int64_t>());
  }
  std::vector<at::Tensor> message{shares};
  g.column->broadcast(message, 0);
  Split split;
  split.batches.assign(shares.data_ptr<int64_t>(), shares.data_ptr<int64_t>() + columns);
  return split;
}

std::vector<double> PipelineTrainer::flushColumn(double lossSum, double computeMs) {
  auto& g = parts_.groups;
  // [column loss, compute of stage 0 .. S-1]: a sum where each rank fills its own slots.
  auto totals = at::zeros({1 + g.topology.stages}, at::kDouble);
  if (g.lastStage()) totals[0] = lossSum;
  totals[1 + g.stageIndex()] = computeMs;
  g.column->allreduceSum(totals);
  return {totals.data_ptr<double>(), totals.data_ptr<double>() + totals.numel()};
}

struct PipelineTrainer::ScheduledStep {
  StageOutcome outcome;
  std::vector<double> column;  // the flush's sums: [column loss, compute of stage 0 .. S-1]
  double spanMs = 0;           // from the schedule's start to the flush's end
};

struct PipelineTrainer::SyncedStep {
  std::vector<at::Tensor> grads;  // summed over the stage's replicas
  at::Tensor scalars;             // summed: [the global batch's loss]
  comm::SyncStats stats;
  double syncCpuMs = 0;
};

metrics::StepRecord PipelineTrainer::step() {
  auto& g = parts_.groups;
  Stopwatch stepWatch;
  const Split split = columnSplit();
  const int j = g.replica();
  lastSplit_ = split;
  const double lr = options_.trainer.lr.at(step_);
  trainer::setLearningRate(*optimizer_, lr);

  const StepInput input = prepareInput(split, j);
  optimizer_->zero_grad();
  const ScheduledStep scheduled = runSchedule(input);
  const StageOutcome& outcome = scheduled.outcome;
  const comm::SyncContext context{step_, split.batches[j], outcome.computeMs, split.batches, lr, timeline_.get()};
  const SyncedStep synced = synchronizeStage(scheduled.column[0], context);
  updateParameters(synced.grads);

  metrics::StepRecord record = recordOf(input, scheduled, synced, context, stepWatch);
  bubbleMs_ += record.bubbleMs;
  spanMs_ += scheduled.spanMs;
  if (g.firstStage()) observeColumn(record, scheduled.column);
  if (options_.livePartition) {
    consultController(split, outcome.computeMs, record.updateMs);
    record.updateMs = stepWatch.elapsedMs();  // the step's wall time counts the gather and any move
  }
  forgetOldSpans();
  position_ += split.total();
  samples_ += split.total();
  ++step_;
  return record;
}

StepInput PipelineTrainer::prepareInput(const Split& split, int replica) {
  auto& g = parts_.groups;
  StepInput input;
  input.step = step_;
  input.microSizes = microBatchSizes(split.batches[replica], options_.microBatches);
  input.globalBatch = static_cast<double>(split.total());
  input.slowdown = options_.slowdown ? options_.slowdown(step_) : 1.0;
  if (g.firstStage() || g.lastStage()) {
    const data::Batch batch = parts_.train.trainingBatch(sampler_.rankDraws(position_, split, replica));
    input.inputs = batch.inputs;
    input.targets = batch.targets;
    input.objective = &parts_.objective;
  }
  return input;
}

PipelineTrainer::ScheduledStep PipelineTrainer::runSchedule(const StepInput& input) {
  Stopwatch spanWatch;
  const StageOutcome outcome = runner_->run(input, timeline_.get(), spans_);
  auto column = flushColumn(outcome.lossSum, outcome.computeMs);
  const double spanMs = spanWatch.elapsedMs();
  return {outcome, std::move(column), spanMs};
}

PipelineTrainer::SyncedStep PipelineTrainer::synchronizeStage(double columnLoss, const comm::SyncContext& context) {
  SyncedStep synced;
  for (auto& p : params_) {
    if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    synced.grads.push_back(p.grad());
  }
  // The column's loss travels with the gradients, so every rank ends with the global batch's loss.
  synced.scalars = at::full({1}, columnLoss, at::kFloat);
  CpuStopwatch syncCpu;
  {
    Timeline::Span span(timeline_.get(), "synchronize", "sync");
    synced.stats = parts_.stageSync.synchronize(synced.grads, synced.scalars, context);
  }
  synced.syncCpuMs = syncCpu.elapsedMs();
  return synced;
}

void PipelineTrainer::updateParameters(const std::vector<at::Tensor>& grads) {
  auto& g = parts_.groups;
  Timeline::Span span(timeline_.get(), "optimizer", "compute");
  if (options_.trainer.clipGradNorm > 0) {
    // The global norm is over every stage's part; each stage's is held by its `replicas` copies alike.
    auto squares = at::full({1}, trainer::squaredNorm(grads), at::kDouble);
    g.world.allreduceSum(squares);
    trainer::clipGradients(grads, options_.trainer.clipGradNorm,
                           squares.item<double>() / static_cast<double>(g.topology.replicas));
  }
  optimizer_->step();
}

metrics::StepRecord PipelineTrainer::recordOf(const StepInput& input, const ScheduledStep& scheduled,
                                              const SyncedStep& synced, const comm::SyncContext& context,
                                              const Stopwatch& stepWatch) const {
  const auto& g = parts_.groups;
  const StageOutcome& outcome = scheduled.outcome;
  const comm::SyncStats& stats = synced.stats;
  metrics::StepRecord record;
  record.step = step_;
  record.rank = g.world.rank();
  record.batch = context.localBatch;
  record.computeMs = outcome.computeMs;
  record.syncMs = stats.elapsedMs;
  record.updateMs = stepWatch.elapsedMs();
  record.loss = synced.scalars[0].item<double>();
  record.lr = context.lr;
  record.bytesSent = stats.bytesSent + outcome.bytesSent;
  record.bytesReceived = stats.bytesReceived + outcome.bytesReceived;
  record.stage = g.stageIndex();
  record.microBatches = static_cast<int64_t>(input.microSizes.size());
  record.bubbleMs = std::max(0.0, scheduled.spanMs - outcome.computeMs);
  record.sendMs = outcome.sendMs;
  record.recvMs = outcome.recvMs;
  record.syncCpuMs = synced.syncCpuMs;
  record.commPhases = stats.phases;
  return record;
}

void PipelineTrainer::observeColumn(const metrics::StepRecord& record, const std::vector<double>& column) {
  // A column is as fast as its slowest stage: that is what the policy sees of it.
  metrics::StepRecord seen = record;
  seen.rank = parts_.groups.stage->rank();  // the allocator's group is the first stages: ranks are pipelines there
  seen.computeMs = *std::max_element(column.begin() + 1, column.end());
  parts_.allocator->observe(seen);
}

void PipelineTrainer::forgetOldSpans() {
  spans_.erase(std::remove_if(spans_.begin(), spans_.end(),
                              [this](const ActionSpan& s) { return s.step <= step_ - kStepsDrawn; }),
               spans_.end());
}

metrics::EvalPoint PipelineTrainer::evaluate() {
  auto& g = parts_.groups;
  // BatchNorm running statistics are per replica: evaluate replica 0's, as data parallelism does rank 0's.
  if (!buffers_.empty() && g.topology.replicas > 1) g.stage->broadcast(buffers_, 0);
  return evaluatePipeline(*stage_, g, stageInputShape(), *parts_.test, parts_.objective, step_);
}

void PipelineTrainer::describe(metrics::RunSummary& summary) {
  auto& g = parts_.groups;
  constexpr double kMiB = 1024.0 * 1024.0;
  const double activationPeakMb = std::max(0.0, metrics::peakResidentBytes() - residentBeforeTraining_) / kMiB;
  const auto all = g.world.allgather(at::tensor({bubbleMs_, spanMs_, activationPeakMb}, at::kDouble));
  double bubble = 0, span = 0;
  std::vector<double> stageBubble(g.topology.stages, 0), stageSpan(g.topology.stages, 0), activation;
  for (size_t r = 0; r < all.size(); ++r) {
    const double* v = all[r].data_ptr<double>();
    bubble += v[0];
    span += v[1];
    stageBubble[g.topology.stageOf(static_cast<int>(r))] += v[0];
    stageSpan[g.topology.stageOf(static_cast<int>(r))] += v[1];
    activation.push_back(v[2]);
  }
  std::vector<double> perStage;
  for (int s = 0; s < g.topology.stages; ++s) perStage.push_back(stageSpan[s] > 0 ? stageBubble[s] / stageSpan[s] : 0);
  const int micros = static_cast<int>(microBatchSizes(lastSplit_.batches.at(0), options_.microBatches).size());
  summary.extra["bubble_fraction"] = span > 0 ? bubble / span : 0.0;
  summary.extra["bubble_fraction_per_stage"] = perStage;
  summary.extra["analytical_bubble"] = analyticalBubble(g.topology.stages, micros);
  summary.extra["activation_peak_mb"] = activation;
  summary.extra["repartitions"] = repartitions_;
  summary.extra["pipeline"] = {{"stages", g.topology.stages},
                               {"replicas", g.topology.replicas},
                               {"micro_batches", options_.microBatches},
                               {"schedule", scheduleName(options_.schedule)},
                               {"partition", options_.partition.str()}};
}

void PipelineTrainer::writeSpans(const std::string& dir) {
  auto& g = parts_.groups;
  const auto parts = g.world.allgatherText(spansCsv(spans_, g));
  if (g.world.rank() != 0) return;
  std::string csv = "step,rank,stage,replica,kind,micro,start_ms,end_ms\n";
  for (const auto& p : parts) csv += p;
  trainer::writeRunFile(dir, "pipeline.csv", csv);
}

void PipelineTrainer::writeOutputs(const std::string& runDir) {
  writeSpans(runDir);
  if (parts_.controller && !runDir.empty()) parts_.controller->writeOutputs(runDir);
  if (timeline_) trainer::writeTimeline(parts_.groups.world, *timeline_, options_.trainer.timelinePath);
}

std::string PipelineTrainer::finalNote(const metrics::RunSummary& summary) const {
  return fmt::format("  bubble {:.1f}%", 100 * summary.extra.value("bubble_fraction", 0.0));
}

}  // namespace balancenet::pipeline

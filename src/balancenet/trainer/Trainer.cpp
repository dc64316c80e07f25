// The step loop. Exactness: each rank's loss is (sum of its per-sample losses) / B, so after the
// sum all-reduce every rank holds the gradient of the whole global batch, whatever the split.
#include "balancenet/trainer/Trainer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>

#include "balancenet/core/CpuStopwatch.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/device/DeviceChoice.h"
#include "balancenet/device/DeviceRandom.h"
#include "balancenet/device/DeviceWork.h"
#include "balancenet/precision/AutocastScope.h"
#include "balancenet/trainer/BatchPrefetcher.h"
#include "balancenet/trainer/Evaluator.h"
#include "balancenet/trainer/GradientClipping.h"
#include "balancenet/trainer/MicroSteps.h"
#include "balancenet/trainer/OptimizerState.h"
#include "balancenet/trainer/RunOutputs.h"
#include "balancenet/trainer/ShardedState.h"

namespace balancenet::trainer {

Trainer::Trainer(TrainerOptions options, TrainerParts parts)
    : options_(std::move(options)), parts_(parts), sampler_(parts.train.size(), options_.seed) {
  for (auto& p : parts_->net.parameters()) params_.push_back(p);
  // The model's device is the worker's: batches, loss and gradients follow it.
  if (!params_.empty()) device_ = params_.front().device();
  prefetcher_ = std::make_unique<BatchPrefetcher>(parts.train, /*pinned=*/device_.is_cuda());
  std::vector<at::Tensor> state = params_;
  for (auto& b : parts_->net.buffers()) state.push_back(b);
  if (options_.broadcastInitialModel) parts_->comm.broadcast(state, 0);
  if (!options_.stateSlices.empty()) {
    sharded_ = std::make_unique<ShardedState>(params_, options_.stateSlices, parts_->comm.rank());
    optimizer_ = makeOptimizer(options_.optimizer, {sharded_->slice()}, options_.lr.at(0));
  } else {
    optimizer_ = makeOptimizer(options_.optimizer, params_, options_.lr.at(0));
  }
  if (options_.recomputeBlocks)
    recomputed_ = std::make_unique<recompute::RecomputedForward>(parts_->net, options_.precision, device_.type());
  if (precision::scalesLoss(options_.precision)) scaler_.emplace();
  // Measured (docs/benchmarks.md): the cnn 80x slower in fp16 than in fp32 on an AVX-512 Xeon, the mlp faster.
  if (options_.precision == precision::Precision::Fp16 && !device_.is_cuda() && parts_->comm.rank() == 0)
    spdlog::warn(
        "--precision fp16 on a CPU: torch's CPU convolutions in fp16 are very slow (80x fp32's here); "
        "bf16 is the CPU's low precision, fp16 the GPU's");
  parts_->net.train();
  if (!options_.timelinePath.empty()) timeline_ = std::make_unique<Timeline>(parts_->comm.rank());
}

Trainer::~Trainer() = default;

std::vector<at::Tensor> Trainer::parameters() const { return params_; }

void Trainer::rewire(comm::Collectives& comm, comm::GradientSync& sync, orchestrator::Allocator& allocator,
                     std::vector<int64_t> stateSlices) {
  TrainerParts parts = *parts_;
  parts_.emplace(TrainerParts{parts.net, parts.train, parts.test, parts.objective, comm, sync, allocator});
  if (sharded_) {  // the new group's slices, and an optimiser over this worker's: restoreState() fills its state
    if (stateSlices.empty()) throw InternalError("a --shard-state worker re-wired without the new group's slices");
    sharded_ = std::make_unique<ShardedState>(params_, std::move(stateSlices), comm.rank());
    optimizer_ = makeOptimizer(options_.optimizer, {sharded_->slice()}, options_.lr.at(step_));
  }
}

TrainingState Trainer::captureState() const {
  // A slice's state is not the job's: jobState() gathers the slices (a collective).
  if (sharded_) throw InternalError("the training state of a --shard-state worker holds only its slice");
  return stateWith(*optimizer_);
}

std::optional<TrainingState> Trainer::jobState() {
  const bool root = parts_->comm.rank() == 0;
  if (!sharded_) return root ? std::optional<TrainingState>(captureState()) : std::nullopt;
  // Every worker's slice of the optimiser state into the state a replicated optimiser would hold: a sharded state
  // resumes with any slicing, or replicated.
  const auto perParameter =
      sharded_->gatherParameterStates(parameterState(*optimizer_, sharded_->slice()), parts_->comm);
  if (!root) return std::nullopt;
  auto replicated = replicatedOptimizer();
  for (size_t i = 0; i < params_.size(); ++i) setParameterState(*replicated, params_[i], perParameter[i]);
  return stateWith(*replicated);
}

std::unique_ptr<torch::optim::Optimizer> Trainer::replicatedOptimizer() const {
  return makeOptimizer(options_.optimizer, params_, options_.lr.at(step_) /* set again every step */);
}

TrainingState Trainer::stateWith(torch::optim::Optimizer& optimizer) const {
  TrainingState s;
  s.step = step_;
  s.position = position_;
  s.samples = samples_;
  // On the host whatever the device: a state is written to checkpoints and sent to joiners, which may compute
  // elsewhere. (The optimiser's state keeps its device here; restoreState maps it onto the restoring worker's.)
  for (const auto& p : params_) s.parameters.push_back(p.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true));
  for (const auto& b : parts_->net.buffers())
    s.buffers.push_back(b.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true));
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  s.optimizer = out.str();
  s.rng = device::generatorState(c10::Device(c10::DeviceType::CPU));
  // Dropout on a GPU draws from that GPU's generator, not the CPU's.
  if (device_.is_cuda()) s.gpuRng = device::generatorState(device_);
  if (scaler_) {
    const auto& l = scaler_->state();
    s.lossScaler = at::tensor({l.scale, static_cast<double>(l.goodSteps), static_cast<double>(l.skipsInARow),
                               static_cast<double>(l.skippedSteps)},
                              at::kDouble);
  }
  return s;
}

void Trainer::restoreState(const TrainingState& s) {
  auto buffers = parts_->net.buffers();
  if (s.parameters.size() != params_.size() || s.buffers.size() != buffers.size())
    throw RuntimeFailure(fmt::format("training state holds {} parameters and {} buffers, the model {} and {}",
                                     s.parameters.size(), s.buffers.size(), params_.size(), buffers.size()));
  {
    at::NoGradGuard noGrad;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!params_[i].sizes().equals(s.parameters[i].sizes()))
        throw RuntimeFailure(fmt::format("training state: parameter {} has shape {}, the model's is {}", i,
                                         fmt::join(s.parameters[i].sizes(), "x"), fmt::join(params_[i].sizes(), "x")));
      params_[i].copy_(s.parameters[i]);
    }
    for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(s.buffers[i]);
  }
  std::istringstream in(s.optimizer);
  torch::serialize::InputArchive archive;
  archive.load_from(in, device_);  // the optimiser's state onto this worker's device, wherever it was saved
  if (sharded_) {  // the state is a replicated optimiser's (checkpointState): this worker keeps its slice of it
    sharded_->readSlice();
    auto replicated = replicatedOptimizer();
    replicated->load(archive);
    std::vector<std::vector<at::Tensor>> perParameter;
    for (const auto& p : params_) perParameter.push_back(parameterState(*replicated, p));
    setParameterState(*optimizer_, sharded_->slice(), sharded_->sliceOfParameterStates(perParameter));
  } else {
    optimizer_->load(archive);
  }
  applyRandomState(s.rng);
  if (device_.is_cuda()) device::restoreGeneratorState(device_, s.gpuRng);  // a CPU worker's state has none
  // A state saved in another precision has no scaler: this run's starts afresh.
  if (scaler_ && s.lossScaler.defined() && s.lossScaler.numel() == 4) {
    const auto l = s.lossScaler.to(at::kDouble);
    const auto* v = l.data_ptr<double>();
    scaler_->restore({v[0], static_cast<int64_t>(v[1]), static_cast<int64_t>(v[2]), static_cast<int64_t>(v[3])});
  }
  step_ = s.step;
  position_ = s.position;
  samples_ = s.samples;
}

struct Trainer::Share {
  data::Batch batch;
  double dataMs = 0;  // waiting for the batch (data_ms)
};

struct Trainer::SyncedStep {
  std::vector<at::Tensor> grads;  // every rank's sum: the global batch's gradient
  at::Tensor scalars;             // summed: [loss, with measuring sum_i (b_i/B)|g_i|^2]
  comm::SyncStats stats;
  double syncCpuMs = 0;
  double gradSq = -1;  // with measuring: the global mean gradient's squared norm, before clipping
};

metrics::StepRecord Trainer::step() {
  Stopwatch stepWatch;
  const int rank = parts_->comm.rank();
  const Split split = allocate();
  const int64_t globalBatch = split.total();
  // Compute time starts after the decision: at a decision step splitFor is a collective that waits for the
  // slowest rank, and that wait counted as compute made the fastest ranks look slow to the policies.
  Stopwatch computeWatch;
  // The schedule's rate, scaled for the B in force (--lr-scaling under an adaptive global batch).
  const double lr = options_.lr.at(step_) * parts_->allocator.lrFactor();
  setLearningRate(*optimizer_, lr);
  const Share share = readShare(split, rank);

  // The gradient noise scale needs this rank's own gradient before the sum: hooks must not start summing
  // during backward then, as with micro-steps.
  const bool measuring = parts_->allocator.needsGradientNorms();
  const bool leftOut = split.batches[rank] == 0;
  comm::SyncContext context{step_, split.batches[rank], 0, split.batches, lr, timeline_.get(), measuring ? 2 : 1};
  // A left-out rank's probe must not reach a hook: its gradient is dropped before the sync.
  context.overlap = !measuring && !leftOut && microStepCount(split.batches[rank]) == 1;
  at::Tensor localLoss = computeGradients(share.batch, globalBatch, context);
  if (leftOut) {
    localLoss = dropProbeGradient();
    context.probeSamples = share.batch.inputs.size(0);
  }
  context.computeMs = computeWatch.elapsedMs();

  const SyncedStep synced = synchronizeGradients(localLoss, context, globalBatch, measuring);
  const double lossScale = scaler_ ? scaler_->scale() : 0;  // before the step may change it
  Stopwatch updateWatch;
  const bool applied = updateParameters(synced.grads);
  const double optimizerMs = updateWatch.elapsedMs();
  logLayerTraffic(synced.stats.layers);
  metrics::StepRecord record = recordOf(rank, share.dataMs, context, synced, measuring, stepWatch);
  if (scaler_) record.lossScale = lossScale;
  record.skipped = applied ? 0 : 1;
  record.ownMs = optimizerMs + synced.stats.ownMs;
  record.probeSamples = context.probeSamples;
  record.servingMs = synced.stats.servingMs;
  record.clientsServed = synced.stats.clientsServed;
  // --shard-state's all-gather of the updated slices is traffic of the step too (counted in its own work's time).
  record.bytesSent += gatheredBytes_;
  record.bytesReceived += gatheredBytes_;
  gatheredBytes_ = 0;
  parts_->allocator.observe(record);
  record.noiseScale = parts_->allocator.noiseScale();

  position_ += globalBatch;
  samples_ += globalBatch;
  ++step_;
  return record;
}

Split Trainer::allocate() {
  // A policy may change the total (the paper's BNO does): weights follow the split actually used.
  Split split = parts_->allocator.splitFor(step_);
  split.validate(parts_->comm.size(), split.total());
  lastSplit_ = split;
  return split;
}

std::vector<data::Draw> Trainer::drawsOf(int64_t position, const Split& split, int rank) {
  // A rank left out of the exchange times one sample of the step's (the first) as its probe: what it learns of its
  // speed while it has no share, so the policy can take it back in when it gets faster.
  if (split.batches[rank] == 0) return sampler_.drawsAt(position, kProbeSamples);
  return sampler_.rankDraws(position, split, rank);
}

at::Tensor Trainer::dropProbeGradient() {
  for (auto& p : params_)
    if (p.grad().defined()) p.mutable_grad().zero_();
  return at::zeros({}, at::TensorOptions().dtype(at::kFloat).device(device_));
}

Trainer::Share Trainer::readShare(const Split& split, int rank) {
  Stopwatch dataWatch;
  data::Batch batch = prefetcher_->take(drawsOf(position_, split, rank));
  if (device_.is_cuda()) {  // from pinned memory: the copies queue behind nothing and return at once
    batch.inputs = batch.inputs.to(device_, /*non_blocking=*/true);
    batch.targets = batch.targets.to(device_, /*non_blocking=*/true);
  }
  const double dataMs = dataWatch.elapsedMs();
  // The next step's share is read while this one computes and synchronises, guessing the split stays.
  if (step_ + 1 < options_.steps) prefetcher_->prefetch(drawsOf(position_ + split.total(), split, rank));
  return {std::move(batch), dataMs};
}

at::Tensor Trainer::computeGradients(const data::Batch& batch, int64_t globalBatch, const comm::SyncContext& context) {
  // Strategies that overlap with backward are armed by beginStep and take each gradient as one backward
  // delivers it; with micro-steps the gradient is complete only after the last, so context.overlap is off and
  // they synchronise p.grad as a whole. beginStep still comes first: a peer posts its clients' receives before
  // its forward, micro-steps or not (after backward, a client's send waited for them and counted as its own work).
  // Overlap is each rank's own choice: a rank's buckets start in the same order either way.
  parts_->sync.beginStep(context);
  optimizer_->zero_grad();
  if (sharded_)  // the optimiser's parameter is the slice: the model's gradients are the trainer's to clear
    for (auto& p : params_) p.mutable_grad().reset();
  at::Tensor localLoss = at::zeros({}, at::TensorOptions().dtype(at::kFloat).device(device_));
  for (const MicroStep& m : microSteps(batch.inputs.size(0), microStepCount(batch.inputs.size(0)))) {
    at::Tensor loss;
    {
      Timeline::Span span(timeline_.get(), "forward", "compute");
      const precision::AutocastScope autocast(options_.precision, device_.type());
      const auto inputs = batch.inputs.narrow(0, m.begin, m.size);
      auto outputs = recomputed_ ? recomputed_->forward(inputs) : parts_->net.forward(inputs);
      loss = parts_->objective.trainingLossSum(outputs, batch.targets.narrow(0, m.begin, m.size)) /
             static_cast<double>(globalBatch);
    }
    {
      Timeline::Span span(timeline_.get(), "backward", "compute");
      (scaler_ ? loss * scaler_->scale() : loss).backward();
    }
    localLoss += loss.detach().to(at::kFloat);
  }
  // A GPU's kernels return before they run: the step's compute is timed once they are done (not the collectives
  // on their own streams), so the policies see the GPU's real time.
  device::waitForDevice(device_);
  return localLoss;
}

int64_t Trainer::microStepCount(int64_t rows) const {
  if (options_.accumulate != kAccumulateAuto) return options_.accumulate;
  return memory::microStepsFor(rows, options_.samplesPerPass);
}

Trainer::SyncedStep Trainer::synchronizeGradients(const at::Tensor& localLoss, const comm::SyncContext& context,
                                                  int64_t globalBatch, bool measuring) {
  SyncedStep synced;
  for (auto& p : params_) {
    if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);  // unused layers still take part in the sum
    synced.grads.push_back(p.grad());
  }
  synced.scalars = localLoss.detach().reshape({1}).to(at::kFloat).clone();
  // This rank's gradient is (b_i/B) g_i (its loss sum over B), so (b_i/B)|g_i|^2 = |grad|^2 B/b_i: summed
  // with the loss, every rank gets sum_i (b_i/B)|g_i|^2 with no message of its own.
  // fp16's gradients are the scaled loss's: its square comes off the norms.
  const double unscaleSq = scaler_ ? 1.0 / (scaler_->scale() * scaler_->scale()) : 1.0;
  if (measuring) {
    const double localSq = context.localBatch == 0
                               ? 0.0
                               : squaredNorm(synced.grads) * unscaleSq * static_cast<double>(globalBatch) /
                                     static_cast<double>(context.localBatch);
    synced.scalars = at::cat({synced.scalars, at::full({1}, localSq, synced.scalars.options())});
  }
  // The sync's own CPU time: with buckets overlapping backward, only the part inside synchronize() counts.
  CpuStopwatch syncCpu;
  {
    Timeline::Span span(timeline_.get(), "synchronize", "sync");
    synced.stats = parts_->sync.synchronize(synced.grads, synced.scalars, context);
  }
  synced.syncCpuMs = syncCpu.elapsedMs();
  if (measuring) synced.gradSq = squaredNorm(synced.grads) * unscaleSq;
  return synced;
}

bool Trainer::updateParameters(const std::vector<at::Tensor>& grads) {
  if (parts_->sync.updatesParameters()) return true;
  Timeline::Span span(timeline_.get(), "optimizer", "compute");
  if (scaler_ && !unscaleGradients(grads)) return false;
  // Every rank holds the same global gradient here, so every rank clips it alike.
  if (options_.clipGradNorm > 0) clipGradients(grads, options_.clipGradNorm);
  if (!sharded_) {
    optimizer_->step();
    return true;
  }
  sharded_->takeGradients(grads);
  optimizer_->step();
  gatheredBytes_ = sharded_->shareUpdates(parts_->comm);
  return true;
}

bool Trainer::unscaleGradients(const std::vector<at::Tensor>& grads) {
  // One pass that divides by the scale and notes any inf or NaN (GradScaler's kernel). The summed gradient is the
  // same on every rank, so every rank finds the same and skips the same steps.
  auto foundInf = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(device_));
  const auto inverse = at::full({1}, 1.0 / scaler_->scale(), foundInf.options());
  at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, inverse);
  return scaler_->update(foundInf.item<float>() == 0);
}

metrics::StepRecord Trainer::recordOf(int rank, double dataMs, const comm::SyncContext& context,
                                      const SyncedStep& synced, bool measuring, const Stopwatch& stepWatch) const {
  const comm::SyncStats& stats = synced.stats;
  metrics::StepRecord record;
  record.step = step_;
  record.rank = rank;
  record.batch = context.localBatch;
  record.microBatches = microStepCount(context.localBatch);
  record.computeMs = context.computeMs + stats.emulatedComputeMs;
  record.dataMs = dataMs;
  record.syncMs = stats.elapsedMs - stats.emulatedComputeMs;
  record.updateMs = stepWatch.elapsedMs();
  record.loss = synced.scalars[0].item<double>();
  record.lr = context.lr;
  record.bytesSent = stats.bytesSent;
  record.bytesReceived = stats.bytesReceived;
  record.syncCpuMs = synced.syncCpuMs;
  record.commPhases = stats.phases;
  if (measuring) {
    record.gradSqLocal = synced.scalars[1].item<double>();
    record.gradSq = synced.gradSq;
  }
  return record;
}

void Trainer::logLayerTraffic(const std::vector<comm::LayerTraffic>& layers) {
  for (const auto& l : layers)
    layerTrafficCsv_ +=
        fmt::format("{},{},{},{},{},{}\n", step_, parts_->comm.rank(), l.layer, l.method, l.bytesSent, l.bytesReceived);
}

void Trainer::describe(metrics::RunSummary& summary) {
  auto counts = at::tensor({static_cast<double>(parts_->train.skippedSamples()),
                            static_cast<double>(prefetcher_->hits()), static_cast<double>(prefetcher_->misses())},
                           at::kDouble);
  parts_->comm.allreduceSum(counts);
  summary.extra["skipped_samples"] = counts[0].item<double>();
  const double reads = counts[1].item<double>() + counts[2].item<double>();
  if (reads > 0) summary.extra["prefetch_hit_rate"] = counts[1].item<double>() / reads;
  parts_->sync.describe(summary.extra);
  // An adaptive global batch ends elsewhere than it started (--global-batch auto or a schedule).
  summary.extra["final_global_batch"] = static_cast<double>(lastSplit_.total());
  if (parts_->allocator.noiseScale() >= 0) summary.extra["gradient_noise_scale"] = parts_->allocator.noiseScale();
  summary.extra["devices"] = parts_->comm.allgatherText(device::deviceName(device_));  // by rank: "cpu", "cuda:0"
  summary.extra["precision"] = precision::precisionName(options_.precision);
  if (scaler_) {
    summary.extra["skipped_steps"] = static_cast<double>(scaler_->skippedSteps());
    summary.extra["final_loss_scale"] = scaler_->scale();
  }
}

metrics::EvalPoint Trainer::evaluate() {
  // BatchNorm running statistics are per rank unless synchronised: evaluate rank 0's, as DDP does.
  auto buffers = parts_->net.buffers();
  if (!buffers.empty()) parts_->comm.broadcast(buffers, 0);
  return trainer::evaluate(parts_->net, *parts_->test, parts_->objective, parts_->comm, step_);
}

EngineCheckpoint Trainer::checkpointState() {
  // Only rank 0's state is written, so only it pays for the copy (under --shard-state every worker gathers).
  EngineCheckpoint out;
  if (auto state = jobState()) out = {std::move(*state), parts_->allocator.saveState()};
  // But each rank's exchange state is its own (error feedback): every rank's goes to the checkpoint.
  for (const auto& t : parts_->sync.saveState())
    out.training.syncState.push_back(t.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true));
  return out;
}

void Trainer::restoreCheckpoint(const EngineCheckpoint& checkpoint, bool sameWorld) {
  restoreState(checkpoint.training);
  if (sameWorld) parts_->allocator.loadState(checkpoint.allocator);
  // Another world size has other shares per rank: its residuals are not this rank's to continue.
  const bool hasState = !parts_->sync.saveState().empty();
  if (hasState && !(sameWorld && parts_->sync.loadState(checkpoint.training.syncState)) && parts_->comm.rank() == 0)
    spdlog::info(
        "the checkpoint holds no state of this gradient exchange for this world (--grad-compress's error "
        "feedback): it starts from zero");
}

void Trainer::writeOutputs(const std::string& runDir) {
  writeLayerTraffic(parts_->comm, layerTrafficCsv_, runDir);
  if (timeline_) writeTimeline(parts_->comm, *timeline_, options_.timelinePath);
}

}  // namespace balancenet::trainer

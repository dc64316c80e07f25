// The session's wiring: the same group, monitor and orchestrator a `balancenet train` worker builds, driven
// by another loop's events instead of the trainer's.
#include "balancenet/session/Session.h"

#include <chrono>
#include <cmath>
#include <thread>

#include <ATen/Functions.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/group/ProcessGroupView.h"
#include "balancenet/core/Error.h"
#include "balancenet/elastic/Admission.h"
#include "balancenet/elastic/GroupReform.h"
#include "balancenet/emulation/Pacing.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/metrics/RetakenRows.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/session/LoopCheckpoint.h"
#include "balancenet/session/ResumePoint.h"
#include "balancenet/trainer/RunOutputs.h"
#include "balancenet/worker/GenerationConfig.h"
#include "balancenet/worker/GroupWiring.h"
#include "balancenet/worker/WorkerSetup.h"

namespace balancenet::session {

c10::intrusive_ptr<c10d::ProcessGroup> Session::processGroup() const {
  require(!closed_, "the session's process group was closed at exit");
  return comm::processGroupOf(*comm_);
}

namespace {

// A process without a launcher is a job of one: its own group, no store to reach.
std::unique_ptr<comm::Communicator> groupOfOne(const job::JobConfig& c) {
  return comm::joinGroup(c10::make_intrusive<c10d::HashStore>(), 0, 1, c.launch.rendezvousTimeout);
}

}  // namespace

Session::Session(job::JobConfig config) : config_(std::move(config)) {
  // The GEMM prior before the others' traffic. The model is the user's: the policies go by measured speed alone.
  const c10::Device cpu(c10::DeviceType::CPU);
  wiring_ =
      std::make_unique<worker::GroupWiring>(config_, rv_, worker::ProcessProfile{cpu, worker::processGemmFlops(cpu)});
  const bool joining = config_.worker && config_.worker->joining;
  if (joining && !elastic())
    throw RuntimeFailure(
        fmt::format("rank {}: a restarted worker can join only an --elastic job", config_.worker->rank));
  if (config_.worker) rv_ = job::rendezvousOptions(config_);
  if (!config_.worker)
    comm_ = groupOfOne(config_);
  else if (!joining)
    comm_ = comm::rendezvous(rv_);
  if (elastic()) {
    jobStore_ = joining ? comm::connectJobStore(rv_) : comm_->sharedStore();
    member_ = !joining                    ? comm_->rank()
              : config_.worker->rank >= 0 ? config_.worker->rank
                                          : elastic::Membership(jobStore_, rv_.opTimeout()).newMemberId();
    membership_ = std::make_unique<elastic::Membership>(jobStore_, config_.resilience.peerTimeout);
    heartbeat_ = std::make_unique<elastic::Heartbeat>(jobStore_, member_);
    // The same re-form and join as a train worker's (ElasticAgent), over groups this session's way.
    const elastic::Connect connect = [this](const c10::intrusive_ptr<c10d::Store>& scoped, int rank, int world) {
      return comm::joinGroup(scoped, rank, world, rv_.opTimeout(), rv_.glooHost(), rv_.iface, rv_.glooThreads);
    };
    reform_ = std::make_unique<elastic::GroupReform>(
        jobStore_, *membership_, member_, connect,
        elastic::ReformOptions{config_.resilience.minNodes, config_.launch.rendezvousTimeout});
  }
  if (joining) {
    joinRunningJob();
    return;
  }
  for (int r = 0; r < comm_->size(); ++r) {  // generation 0: the job as launched, member id = launch rank
    generation_.members.push_back(r);
    generation_.committed.push_back(0);
  }
  if (elastic() && member_ == 0) membership_->recordInitialWorld(comm_->size());
  wiring_->startMonitor(*comm_);
}

void Session::joinRunningJob() {
  spdlog::info("rank {} asks to join the job", member_);
  auto formed = reform_->join();
  if (!formed)
    throw JobFinishedBeforeJoin(fmt::format("rank {}: the job finished before this worker could join", member_));
  comm_ = std::move(formed->comm);
  generation_ = std::move(formed->generation);
  wiring_->startMonitor(*comm_);
  joinState_ = adoptResumePoint(formed->state).state;
  joined_ = true;
}

Resume Session::adoptResumePoint(const std::string& bytes) {
  // The member with the newest committed step handed its state and its place in the stream to everyone.
  ResumePoint point = decodeResumePoint(bytes);
  Resume resume;
  resume.sourceRank = generation_.sourceRank();
  resume.worldSize = comm_->size();
  resume.step = step_ = point.step;
  resume.batch = batch_ = committedBatch_ = point.batch;
  resume.state = std::move(point.state);
  metrics::dropRetakenRows(records_, evals_, step_);
  if (heartbeat_) heartbeat_->setStep(step_);
  return resume;
}

Session::~Session() { close(); }

void Session::close() {
  if (closed_) return;
  closed_ = true;
  if (wiring_) wiring_->stopMonitor();
  // In the reverse order of their making: the re-form over the membership, the beat over the store.
  reform_.reset();
  heartbeat_.reset();
  membership_.reset();
  if (wiring_) wiring_->release();
  comm_.reset();
  jobStore_.reset();
}

void Session::startData(int64_t datasetSize, int64_t globalBatch, uint64_t seed) {
  require(!sampler_, "the session already has its data: create one balancenet DataLoader per job");
  require(globalBatch >= worldSize(), fmt::format("global_batch {} is smaller than the job's {} workers: each needs "
                                                  "at least one sample",
                                                  globalBatch, worldSize()));
  require(datasetSize >= globalBatch,
          fmt::format("the dataset has {} samples, fewer than one global batch of {}", datasetSize, globalBatch));
  if (config_.split.batches.empty()) {
    config_.split = Split::equal(globalBatch, worldSize());
  } else {
    require(config_.split.total() == globalBatch,
            fmt::format("--split {} sums to {}, but the DataLoader's global_batch is {}", config_.split.str(),
                        config_.split.total(), globalBatch));
  }
  config_.trainer.globalBatch = globalBatch;
  config_.trainer.seed = seed;
  split_ = config_.split;
  sampler_.emplace(datasetSize, seed);
  wiring_->makeAllocator(generation_, 0, models::ModelInfo{});
}

std::string Session::loopCheckpoint() const {
  require(sampler_.has_value(), "a checkpoint of the loop needs its data: create the balancenet DataLoader first");
  // The last completed step's place: a checkpoint taken inside a step resumes at that step's beginning.
  return encodeLoopCheckpoint({step_, committedBatch_, globalBatch(), sampler_->datasetSize(), config_.trainer.seed,
                               worldSize(), wiring_->allocator().saveState()});
}

void Session::restoreLoopCheckpoint(const std::string& text) {
  require(sampler_.has_value() && !clock_.running(),
          "a checkpoint of the loop is restored between steps, after the data");
  const auto point = decodeLoopCheckpoint(text);
  require(point.globalBatch == globalBatch() && point.datasetSize == sampler_->datasetSize() &&
              point.seed == config_.trainer.seed,
          fmt::format("the checkpoint was trained with global batch {} over {} samples (seed {}), this run has {} over "
                      "{} (seed {}): resume with the same data and batch",
                      point.globalBatch, point.datasetSize, point.seed, globalBatch(), sampler_->datasetSize(),
                      config_.trainer.seed));
  step_ = point.step;
  batch_ = point.batch;
  committedBatch_ = point.batch;
  // Another world: the flags' split for it, as a restarted `balancenet train` does.
  if (point.worldSize == worldSize()) wiring_->allocator().loadState(point.allocator);
}

int64_t Session::batchesPerPass() const { return sampler_ ? sampler_->datasetSize() / globalBatch() : 0; }

std::vector<int64_t> Session::guessIndices(int64_t batch) {
  require(sampler_.has_value(), "no data yet: create the balancenet DataLoader first");
  return sampler_->rankIndices(batch * globalBatch(), split_, rank());
}

BatchShare Session::beginBatch() {
  require(sampler_.has_value(), "no data yet: create the balancenet DataLoader first");
  if (!clock_.running()) {
    split_ = wiring_->allocator().splitFor(step_);
    clock_.begin(StepClock::Clock::now());
    throttle_.markStepStart();
    stepShare_ = 0;
    stepBatches_ = 0;
    pacedComputeMs_ = 0;
  }
  BatchShare share;
  share.step = step_;
  share.batch = batch_;
  share.indices = sampler_->rankIndices(batch_ * globalBatch(), split_, rank());
  share.weight = static_cast<double>(split_.batches.at(rank())) / static_cast<double>(globalBatch());
  ++batch_;
  ++stepBatches_;
  stepShare_ += static_cast<int64_t>(share.indices.size());
  return share;
}

void Session::batchLoaded(double ms, bool guessRight) {
  clock_.dataLoaded(ms);
  ++guessedBatches_;
  rightGuesses_ += guessRight;
}

void Session::backwardDone() {
  const auto& e = config_.emulation;
  if (clock_.running() && (!e.slowdown.empty() || !e.nodeSpeed.empty())) {
    const double computeMs = clock_.computeMsAt(StepClock::Clock::now());
    double sleepMs = 0;
    if (!e.nodeSpeed.empty())  // the step's compute so far lasts at least its samples at the pace
      sleepMs =
          emulation::paceSleepMs(emulation::PaceMode::Paced, e.nodeSpeed.at(step_, rank()), computeMs, stepShare_);
    else  // the compute since the last pacing lasts `factor` times longer
      sleepMs = emulation::paceSleepMs(emulation::PaceMode::Relative, e.slowdown.at(step_, rank()),
                                       computeMs - pacedComputeMs_, 0);
    if (sleepMs > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleepMs));
    pacedComputeMs_ = computeMs + std::max(sleepMs, 0.0);
  }
  clock_.backwardDone(StepClock::Clock::now());
}

void Session::reduced() { clock_.reduced(StepClock::Clock::now()); }

CompressedBuckets& Session::compressGradients(const std::string& spec, int warmupSteps,
                                              const std::vector<comm::BufferPart>& model) {
  auto options = compression::parseGradCompression(spec);
  require(!elastic() || !compression::compresses(options),
          "grad_compress is not for --elastic jobs: a re-formed group would drop every rank's error feedback");
  require(warmupSteps >= 0, fmt::format("compress_warmup must not be negative, got {}", warmupSteps));
  options.warmupSteps = warmupSteps;
  compressed_.push_back(std::make_unique<CompressedBuckets>(*comm_, options, model));
  if (rank() == 0) spdlog::info("gradients cross the wire as {}", compressed_.back()->describe());
  return *compressed_.back();
}

void Session::endStep(double loss) {
  require(clock_.running(), "step_done() without a batch: take the step's batch from the balancenet DataLoader first");
  const StepTimes t = clock_.end(StepClock::Clock::now());
  metrics::StepRecord r;
  r.step = step_;
  r.rank = rank();
  r.batch = stepShare_;
  r.microBatches = stepBatches_;  // global batches accumulated in the step
  r.computeMs = t.computeMs;
  r.syncMs = t.syncMs;
  r.updateMs = t.updateMs;
  r.dataMs = t.dataMs;
  r.loss = loss;           // this rank's mean; finish() makes it the whole batch's
  throttle_.stampStep(r);  // comm_phases and sync_cpu_ms stay 0: the sync is DDP's, inside torch
  records_.push_back(r);
  wiring_->allocator().observe(r);
  trainMs_ += t.updateMs;
  ++step_;
  committedBatch_ = batch_;
  if (elastic()) {
    heartbeat_->setStep(step_);
    planJoins();
  }
  printProgress(r);
}

void Session::printProgress(const metrics::StepRecord& last) {
  if (rank() != 0 || config_.trainer.progressSeconds <= 0 ||
      sinceProgress_.elapsedMs() < config_.trainer.progressSeconds * 1000)
    return;
  const double rate = trainMs_ > 0 ? static_cast<double>(batch_ * globalBatch()) / (trainMs_ / 1000) : 0;
  spdlog::info("step {}  {:.1f} samples/s  split {}  rank 0: {:.0f} ms compute, {:.0f} ms sync", step_, rate,
               split_.str(), last.computeMs, last.syncMs);
  sinceProgress_.restart();
}

Resume Session::reform(const std::string& failure) {
  if (!elastic()) throw RuntimeFailure(failure);
  const int number = generation_.number + 1;
  auto candidates = generation_.members;
  std::vector<int> joiners = plannedJoiners_;
  if (!failure.empty()) {
    spdlog::warn("rank {}: {}; re-forming the group without the workers that are gone", rank(), failure);
    if (auto admitted = reform_->admittedJoiners(number, step_); !admitted.empty()) joiners = admitted;
  }
  candidates.insert(candidates.end(), joiners.begin(), joiners.end());
  planDue_ = false;
  plannedJoiners_.clear();
  // Our end of the old group goes first: peers still blocked in it are released at once.
  const int workersBefore = comm_->size();
  wiring_->release();
  comm_.reset();
  clock_.abandon();
  auto formed = reform_->reform(number, std::move(candidates), step_, step_, [this] {
    return encodeResumePoint({step_, committedBatch_, committedState_ ? committedState_() : std::string()});
  });
  comm_ = std::move(formed.comm);
  generation_ = std::move(formed.generation);
  wiring_->startMonitor(*comm_);
  Resume resume = adoptResumePoint(formed.state);
  if (sampler_) {  // the data's split over the new members (without data yet, startData makes it)
    wiring_->makeAllocator(generation_, workersBefore, models::ModelInfo{});
    split_ = worker::forMembers(config_, generation_.members).split;
  }
  if (rank() == 0)
    spdlog::info("the group re-formed with {} workers (members {}); training goes on from step {}", worldSize(),
                 generation_.memberList(), step_);
  return resume;
}

void Session::planJoins() {
  // Rank 0 admits waiting workers for the boundary after the next step; every rank finds the plan by then.
  const int next = generation_.number + 1;
  auto plan = membership_->planned(next);
  if (!plan && rank() == 0)
    elastic::admitJoiners(*membership_, worldSize(), next, step_, config_.resilience.maxNodes, globalBatch());
  if (plan && plan->atStep == step_) {
    planDue_ = true;
    plannedJoiners_ = plan->joiners;
  }
}

void Session::recordEval(double accuracy, double loss) { evals_.push_back({step_, accuracy, loss, trainMs_ / 1000}); }

void Session::sumStepLosses() {
  // The whole batch's loss of each step: the ranks' means weighted by their shares, over the sum of the weights.
  // Without a membership change the weights sum to 1; after one, the steps before it lack the parts of the
  // workers that left, and the loss is the mean over the samples of those that finished the run.
  const int64_t steps = step_;
  auto sums = at::zeros({2, steps}, at::kDouble);
  auto* parts = sums.data_ptr<double>();
  auto* weights = parts + steps;
  for (const auto& r : records_) {
    const double weight = static_cast<double>(r.batch) / static_cast<double>(globalBatch() * r.microBatches);
    parts[r.step] += r.loss * weight;
    weights[r.step] += weight;
  }
  comm_->allreduceSum(sums);
  for (auto& r : records_) r.loss = weights[r.step] > 0 ? parts[r.step] / weights[r.step] : NAN;
}

metrics::RunSummary Session::finish() {
  if (summary_) return *summary_;
  require(!clock_.running(), "finish() inside a step: call step_done() after the step's last batch first");
  if (elastic() && rank() == 0) membership_->markFinished();  // workers still waiting to join go home
  if (step_ > 0) sumStepLosses();

  metrics::RunSummary summary;
  summary.model = modelName_;
  summary.worldSize = worldSize();
  summary.globalBatch = globalBatch();
  summary.steps = step_;
  summary.split = split_.str();
  summary.trainSeconds = trainMs_ / 1000;
  const int64_t samples = batch_ * globalBatch();
  summary.samplesPerSecond = trainMs_ > 0 ? static_cast<double>(samples) / summary.trainSeconds : 0;
  summary.finalLoss = records_.empty() ? 0 : records_.back().loss;
  summary.evals = evals_;
  summary.extra["samples_trained"] = static_cast<double>(samples);
  summary.extra["effective_global_batch"] = step_ > 0 ? static_cast<double>(samples) / step_ : 0.0;
  summary.extra["driver"] = "python";
  if (guessedBatches_ > 0)
    summary.extra["prefetch_hit_rate"] = static_cast<double>(rightGuesses_) / static_cast<double>(guessedBatches_);
  trainer::writeRunOutputs(*comm_, records_, summary, config_.trainer.runDir);
  wiring_->release();  // rank 0's orchestrator writes the rest of splits.csv
  comm_->barrier();    // nobody leaves while rank 0 still writes or the store's host is still needed
  summary_ = summary;
  return summary;
}

}  // namespace balancenet::session

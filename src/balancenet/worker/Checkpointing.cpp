#include "balancenet/worker/Checkpointing.h"

#include <spdlog/spdlog.h>

#include "balancenet/checkpoint/Resume.h"
#include "balancenet/comm/FactorLinear.h"
#include "balancenet/worker/SyncFactory.h"

namespace balancenet::worker {
using job::JobConfig;
namespace {

checkpoint::RunIdentity identityOf(const JobConfig& c, const models::Network& net) {
  checkpoint::RunIdentity run;
  run.signature = checkpoint::ModelSignature::of(c.model.name, net);
  run.optimizer = c.trainer.optimizer.name;
  run.worldSize = c.worker ? c.worker->worldSize : c.launch.worldSize();
  run.globalBatch = c.trainer.globalBatch;
  run.seed = c.trainer.seed;
  run.engine = c.pipeline.enabled() ? checkpoint::kPipelineEngine : checkpoint::kDataParallelEngine;
  return run;
}

void warn(const std::string& message) { spdlog::warn("{}", message); }

}  // namespace

void preflightCheckpoints(const JobConfig& c) {
  const auto& o = c.checkpoint;
  if (o.dir.empty()) return;
  checkpoint::CheckpointStore store(o.dir, o.keep);
  if (!o.resume) return checkpoint::requireNoCheckpoints(store);
  // The workers' model, built the same way, so its parameter names and shapes are theirs.
  models::ModelOptions options = c.model;
  if (capturesFactors(c.comm)) options.linear = comm::factorLinearFactory();
  const auto built = models::buildModel(options);
  if (c.pipeline.enabled()) built.net->separateSharedWeights();  // as PipelineWorker does
  checkpoint::findResumable(store, identityOf(c, *built.net), c.trainer.steps, warn);
}

WorkerCheckpoints::WorkerCheckpoints(const JobConfig& c, comm::Communicator& comm, const models::Network& net)
    : config_(c) {
  const auto& o = c.checkpoint;
  if (o.dir.empty()) return;
  run_ = identityOf(c, net);
  store_ = std::make_unique<checkpoint::CheckpointStore>(o.dir, o.keep);
  // Without a launcher nobody has checked the directory yet; rank 0 alone writes it.
  if (comm.rank() == 0 && !o.resume && !(c.worker && c.worker->storeHostedByLauncher))
    checkpoint::requireNoCheckpoints(*store_);
  writer_ = std::make_unique<checkpoint::CheckpointWriter>(*store_, run_, o.every);
}

WorkerCheckpoints::~WorkerCheckpoints() = default;

void WorkerCheckpoints::addTo(std::vector<trainer::StepBoundary*>& boundaries) {
  if (writer_) boundaries.push_back(writer_.get());
}

void WorkerCheckpoints::resumeIfAsked(trainer::StepEngine& engine) {
  if (!store_ || !config_.checkpoint.resume) return;
  // The launcher has printed the warnings already; a job without one prints them here.
  const bool launcherChecked = config_.worker && config_.worker->storeHostedByLauncher;
  checkpoint::resume(engine, config_.trainer.steps, *store_, run_,
                     launcherChecked
                         ? checkpoint::CheckpointStore::Warn([](const std::string& m) { spdlog::debug("{}", m); })
                         : checkpoint::CheckpointStore::Warn(warn));
}

std::optional<trainer::TrainingState> WorkerCheckpoints::newestState() const {
  if (!store_) return std::nullopt;
  const auto found = store_->newestGood(warn);  // the run's own directory: it checked the model at start
  if (!found) return std::nullopt;
  return trainer::fromBytes(found->checkpoint.training);
}

}  // namespace balancenet::worker

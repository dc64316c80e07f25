// Data, model and outputs of a worker.
#include "balancenet/worker/WorkerSetup.h"

#include <spdlog/spdlog.h>

#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/models/StateDictExport.h"
#include "balancenet/worker/SyncFactory.h"

namespace balancenet::worker {
using job::JobConfig;

TrainingData loadTrainingData(const JobConfig& c) {
  data::DataOptions options = c.data;
  if (options.loaderThreads <= 0) options.loaderThreads = c.threads;
  data::DatasetPair sets = data::openDataset(options);
  objective::Objective objective(sets.train->spec(), c.objective);
  const int64_t samples = c.trainer.evalSamples;
  auto test = data::evaluationSet(sets.test, samples, c.trainer.seed);
  if (sets.test && samples != data::kAllSamples && c.worker && c.worker->rank == 0) {
    if (!test)
      spdlog::info("no evaluation (--eval-samples 0)");
    else
      spdlog::info("evaluating {} of {} test samples (--eval-samples {}: the same subset, seeded by --seed, each time)",
                   test->size(), sets.test->size(), samples);
  }
  return {std::move(sets.train), std::move(test), std::move(objective)};
}

models::BuiltModel buildWorkerModel(const JobConfig& c, const data::DatasetSpec& spec, bool announce) {
  models::ModelOptions options = c.model;
  models::fitModelToData(options, spec);
  // The layers' group is seated by WorkerGroup, which seats the new one after a membership change.
  if (c.syncBatchNorm)
    options.batchNorm = [](int64_t channels) { return torch::nn::AnyModule(comm::SyncBatchNorm2d(channels, nullptr)); };
  if (capturesFactors(c.comm)) options.linear = comm::factorLinearFactory();
  at::manual_seed(c.trainer.seed);
  auto model = models::buildModel(options);
  if (announce)
    spdlog::info("model {} (width {}): {} parameters, {:.2f} MFLOPs/sample; {} workers, split {}", c.model.name,
                 c.model.width, model.info.parameters, model.info.flopsPerSample / 1e6, c.worker->worldSize,
                 c.split.str());
  return model;
}

void writeModelOutputs(const JobConfig& c, models::Network& net, const std::vector<at::Tensor>& parameters, int rank,
                       const metrics::RunSummary& summary, const metrics::MetricStyle& style) {
  if (rank != 0) return;
  if (!c.exportPath.empty()) {
    models::exportStateDict(net, c.exportPath);
    spdlog::info("state_dict written to {} (Python: model.load_state_dict(torch.load(path)))", c.exportPath);
  }
  if (!c.saveParams.empty()) models::saveParameters(parameters, c.saveParams);
  if (!summary.evals.empty())
    spdlog::info("final {} after {} steps, {:.1f} {}/s", metrics::formatEval(summary.evals.back(), style),
                 summary.steps, summary.samplesPerSecond * static_cast<double>(style.unitsPerSample), style.rateUnit);
}

}  // namespace balancenet::worker

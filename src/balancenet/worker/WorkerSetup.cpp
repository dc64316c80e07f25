// Data, model, allocator and outputs of a worker.
#include "balancenet/worker/WorkerSetup.h"

#include <spdlog/spdlog.h>

#include "balancenet/adaptive/GlobalBatchSizer.h"
#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/device/DeviceWork.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/models/StateDictExport.h"
#include "balancenet/orchestrator/ProbePeers.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
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

std::unique_ptr<monitor::NodeMonitor> makeNodeMonitor(const job::JobConfig& c, comm::Communicator& comm,
                                                      const comm::RendezvousOptions& rv) {
  if (comm.size() == 1) return std::make_unique<monitor::NodeMonitor>(nullptr);
  monitor::NodeMonitor::Options options;
  options.probeSelection =
      orchestrator::probeSelection(comm.rank(), comm.size(), c.orchestration.probePeers, c.trainer.seed);
  return std::make_unique<monitor::NodeMonitor>(comm::sideGroup(comm, comm::kProbeGroupPrefix, rv), options);
}

orchestrator::NodeSampler monitorSampler(const monitor::NodeMonitor& monitor, double gemmFlops, c10::Device device,
                                         int64_t shareCap) {
  return [&monitor, gemmFlops, device, shareCap] {
    const auto snap = monitor.snapshot();
    orchestrator::NodeSample sample{snap.residentBytes, snap.memoryTotalBytes,        snap.memoryAvailableBytes,
                                    snap.latencyMs,     snap.bandwidthBytesPerSecond, gemmFlops,
                                    snap.latencyPeers};
    if (device.is_cuda()) {
      const auto gpu = device::deviceMemory(device);
      sample.residentBytes = static_cast<double>(gpu.peakAllocatedBytes);
      sample.memoryTotalBytes = static_cast<double>(gpu.totalBytes);
      sample.memoryAvailableBytes = static_cast<double>(gpu.freeBytes);
    }
    sample.shareCap = shareCap;
    return sample;
  };
}

std::unique_ptr<orchestrator::BatchSizer> makeBatchSizer(const JobConfig& c) {
  const auto& sizing = c.orchestration.batchSizing;
  if (!sizing.adaptive()) return nullptr;
  const auto rule = adaptive::parseLrScaling(sizing.lrScaling, c.trainer.optimizer.name);
  // Throughput for each B is predicted as the policy will split it: balanced by its optimum, the others by
  // the proportions of the split in force.
  return std::make_unique<adaptive::GlobalBatchSizer>(sizing, rule, c.trainer.globalBatch,
                                                      c.orchestration.policy == "balanced");
}

std::unique_ptr<orchestrator::Allocator> makeAllocator(const JobConfig& c, comm::Communicator& comm,
                                                       const models::ModelInfo& model,
                                                       orchestrator::NodeSampler sampler,
                                                       orchestrator::OrchestratorOptions options) {
  // The orchestrator's periodic gather is a barrier, which SSP exists to avoid: a fixed split instead.
  if (c.comm.staleness > 0) return std::make_unique<orchestrator::StaticAllocator>(c.split);
  orchestrator::PolicyOptions policy;
  policy.name = c.orchestration.policy;
  policy.seed = c.trainer.seed;
  policy.staticSplit = c.split;
  policy.bnoNormalize = c.orchestration.bnoNormalize;
  options.rebalanceEvery = c.orchestration.rebalanceEvery;
  options.probePeers = c.orchestration.probePeers;
  options.rebalanceBudget = c.orchestration.rebalanceBudget;
  options.globalBatch = c.trainer.globalBatch;
  options.flopsPerSample = static_cast<double>(model.flopsPerSample);
  options.memoryPerSampleBytes = static_cast<double>(model.memoryPerSampleBytes);
  options.runDir = c.trainer.runDir;
  return std::make_unique<orchestrator::Orchestrator>(orchestrator::makePolicy(policy), c.split, comm,
                                                      std::move(sampler), options, makeBatchSizer(c));
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

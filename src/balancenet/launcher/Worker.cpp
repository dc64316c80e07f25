// Wiring of one worker: this is where strategies (allocator, gradient sync, batch norm) are chosen.
#include "balancenet/launcher/Worker.h"

#include <ATen/Parallel.h>
#include <torch/serialize.h>

#include <sstream>

#include <spdlog/spdlog.h>

#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/MemoryReuse.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/launcher/SyncFactory.h"
#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/models/StateDictExport.h"
#include "balancenet/monitor/NodeMonitor.h"
#include "balancenet/orchestrator/Orchestrator.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"

namespace balancenet::launcher {
namespace {

std::unique_ptr<orchestrator::Allocator> makeAllocator(const JobConfig& c, comm::Communicator& comm,
                                                       const models::ModelInfo& model,
                                                       orchestrator::NodeSampler sampler) {
  // The orchestrator's periodic gather is a barrier, which SSP exists to avoid: a fixed split instead.
  if (c.comm.staleness > 0) return std::make_unique<orchestrator::StaticAllocator>(c.split);
  orchestrator::PolicyOptions policy;
  policy.name = c.orchestration.policy;
  policy.seed = c.trainer.seed;
  policy.staticSplit = c.split;
  policy.bnoNormalize = c.orchestration.bnoNormalize;
  orchestrator::OrchestratorOptions options;
  options.rebalanceEvery = c.orchestration.rebalanceEvery;
  options.globalBatch = c.trainer.globalBatch;
  options.flopsPerSample = static_cast<double>(model.flopsPerSample);
  options.memoryPerSampleBytes = static_cast<double>(model.memoryPerSampleBytes);
  options.runDir = c.trainer.runDir;
  return std::make_unique<orchestrator::Orchestrator>(orchestrator::makePolicy(policy), c.split, comm,
                                                      std::move(sampler), options);
}

}  // namespace

int runWorker(const JobConfig& c) {
  const auto& id = *c.worker;
  at::set_num_threads(c.threads);
  if (!keepFreedMemory()) spdlog::debug("malloc settings from the environment kept (GLIBC_TUNABLES / MALLOC_*)");

  comm::RendezvousOptions rv;
  rv.masterAddr = c.launch.masterAddr;
  rv.masterPort = c.launch.masterPort;
  rv.rank = id.rank;
  rv.worldSize = id.worldSize;
  rv.hostStore = id.rank == 0 && !id.storeHostedByLauncher;
  rv.timeout = c.launch.rendezvousTimeout;
  rv.iface = c.launch.iface;
  auto comm = comm::rendezvous(rv);

  auto train = data::loadMnist(c.dataDir, /*train=*/true);
  auto test = data::loadMnist(c.dataDir, /*train=*/false);

  models::ModelOptions modelOptions = c.model;
  if (c.syncBatchNorm)
    modelOptions.batchNorm = [&comm](int64_t channels) {
      return torch::nn::AnyModule(comm::SyncBatchNorm2d(channels, comm.get()));
    };
  if (capturesFactors(c.comm)) modelOptions.linear = comm::factorLinearFactory();
  at::manual_seed(c.trainer.seed);
  auto model = models::buildModel(modelOptions);
  if (id.rank == 0)
    spdlog::info("model {} (width {}): {} parameters, {:.2f} MFLOPs/sample; {} workers, split {}", c.model.name,
                 c.model.width, model.info.parameters, model.info.flopsPerSample / 1e6, id.worldSize, c.split.str());

  // Live node metrics on their own thread and their own group, so training never waits for them.
  monitor::NodeMonitor nodeMonitor(comm::sideGroup(*comm, "probe", rv));
  const double gemmFlops = metrics::measureGemmFlops();
  auto sampler = [&nodeMonitor, gemmFlops] {
    const auto snap = nodeMonitor.snapshot();
    return orchestrator::NodeSample{snap.residentBytes, snap.memoryTotalBytes, snap.memoryAvailableBytes,
                                    snap.latencyMs, snap.bandwidthBytesPerSecond, gemmFlops};
  };
  auto allocator = makeAllocator(c, *comm, model.info, sampler);
  installLinkEmulation(*comm, c.emulation);
  auto sync = makeGradientSync(*comm, *model.net, c);
  if (id.rank == 0 && c.comm.explain) {
    auto text = sync->explain();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    spdlog::info("gradient synchronisation:\n{}", text);
  }
  trainer::Trainer trainer(c.trainer, {*model.net, train, &test, *comm, *sync, *allocator});
  auto summary = trainer.run();
  if (id.rank == 0 && !c.exportPath.empty()) {
    models::exportStateDict(*model.net, c.exportPath);
    spdlog::info("state_dict written to {} (Python: model.load_state_dict(torch.load(path)))", c.exportPath);
  }
  if (id.rank == 0 && !c.saveParams.empty()) {
    std::ostringstream out;
    torch::save(trainer.parameters(), out);
    writeFileAtomically(c.saveParams, out.str());
  }
  if (id.rank == 0 && !summary.evals.empty())
    spdlog::info("final test accuracy {:.2f}% after {} steps, {:.1f} samples/s", 100 * summary.evals.back().accuracy,
                 summary.steps, summary.samplesPerSecond);
  nodeMonitor.stop();
  comm->barrier();  // rank 0 may serve the store: nobody leaves while others still need it
  return 0;
}

}  // namespace balancenet::launcher

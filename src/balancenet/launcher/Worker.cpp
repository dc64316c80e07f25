// Wiring of one worker: this is where strategies (allocator, gradient sync, batch norm) are chosen.
#include "balancenet/launcher/Worker.h"

#include <ATen/Parallel.h>
#include <torch/serialize.h>

#include <sstream>

#include <spdlog/spdlog.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/orchestrator/StaticAllocator.h"

namespace balancenet::launcher {

int runWorker(const JobConfig& c) {
  const auto& id = *c.worker;
  at::set_num_threads(c.threads);

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
  at::manual_seed(c.trainer.seed);
  auto model = models::buildModel(modelOptions);
  if (id.rank == 0)
    spdlog::info("model {} (width {}): {} parameters, {:.2f} MFLOPs/sample; {} workers, split {}", c.model.name,
                 c.model.width, model.info.parameters, model.info.flopsPerSample / 1e6, id.worldSize, c.split.str());

  orchestrator::StaticAllocator allocator(c.split);
  comm::FlatAllReduceSync sync(*comm);
  trainer::Trainer trainer(c.trainer, {*model.net, train, &test, *comm, sync, allocator});
  auto summary = trainer.run();
  if (id.rank == 0 && !c.saveParams.empty()) {
    std::ostringstream out;
    torch::save(trainer.parameters(), out);
    writeFileAtomically(c.saveParams, out.str());
  }
  if (id.rank == 0 && !summary.evals.empty())
    spdlog::info("final test accuracy {:.2f}% after {} steps, {:.1f} samples/s", 100 * summary.evals.back().accuracy,
                 summary.steps, summary.samplesPerSecond);
  comm->barrier();  // rank 0 may serve the store: nobody leaves while others still need it
  return 0;
}

}  // namespace balancenet::launcher

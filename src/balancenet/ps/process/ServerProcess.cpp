// Wiring of one parameter server: the model's shapes give the shard, the job's store the group.
#include "balancenet/ps/process/ServerProcess.h"

#include <spdlog/spdlog.h>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/core/MemoryReuse.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/ps/ParameterServer.h"
#include "balancenet/ps/PsGroup.h"

namespace balancenet::ps {
using job::JobConfig;
using job::rendezvousOptions;

int runParameterServer(const JobConfig& c) {
  const int index = *c.server;
  const int workers = c.launch.worldSize();
  setIntraOpThreads(1);  // the optimiser on a shard is light; the cores belong to the workers
  keepFreedMemory();     // every push allocates and frees a shard-sized buffer

  // Only the shapes matter: the values come from worker 0 after the trainer's start-up broadcast.
  models::ModelOptions modelOptions = c.model;
  models::fitModelToData(modelOptions, data::openDataset(c.data).train->spec());
  auto model = models::buildModel(modelOptions);
  int64_t total = 0;
  for (const auto& p : model.net->parameters()) total += p.numel();
  ps::ServerOptions options;
  options.workers = workers;
  options.index = index;
  options.shard = ps::layoutShards(total, c.comm.servers).at(index);
  options.optimizer = c.trainer.optimizer;
  options.staleness = c.comm.staleness;
  options.steps = c.trainer.steps;
  options.compression = c.comm.compression;

  const comm::RendezvousOptions rv = rendezvousOptions(c);
  auto group = ps::joinPsGroup(comm::connectJobStore(rv), ps::serverRank(workers, index), workers, c.comm.servers,
                               rv.timeout, rv.glooHost(), rv.iface);
  ps::ParameterServer server(*group, options);
  const auto report = server.run();
  spdlog::info("parameter server {}: {} parameters, {} pushes applied, largest clock gap {} step(s) (staleness {})",
               index, options.shard.size(), report.pushes, report.largestClockGap, c.comm.staleness);
  return 0;
}

}  // namespace balancenet::ps

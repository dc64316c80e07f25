// WorkerThreads: the default thread count from core/CpuAllowance, and applying it with one log line.
#include "balancenet/worker/WorkerThreads.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/CpuAllowance.h"
#include "balancenet/core/IntraOpThreads.h"

namespace balancenet::worker {
using job::JobConfig;

int localWorkers(const JobConfig& c) {
  if (c.worker && c.worker->localWorldSize > 0) return c.worker->localWorldSize;
  return std::max(1, c.launch.nprocPerNode);
}

void chooseDefaultThreads(JobConfig& c, const CgroupPaths& paths) {
  const CpuAllowance cpus = readCpuAllowance(paths);
  const int local = localWorkers(c);
  c.threads = threadsPerWorker(cpus.cores(), local);
  const bool fromEnvironment = c.worker && c.worker->localWorldSize > 0;
  c.threadsFrom = fmt::format("{} shared by {} local worker{} ({})", cpus.describe(), local, local == 1 ? "" : "s",
                              fromEnvironment ? "LOCAL_WORLD_SIZE" : "--nproc-per-node");
}

void applyWorkerThreads(const JobConfig& c) {
  setIntraOpThreads(c.threads);
  // Every worker of a host finds the same: rank 0 says it once; the others when asked (--log-level debug).
  const auto level = c.worker && c.worker->rank == 0 ? spdlog::level::info : spdlog::level::debug;
  if (c.worker)  // hosts may run different numbers of workers: each sizes its threads by its own host's
    spdlog::debug("rank {} of {}: local rank {} of {} on this host", c.worker->rank, c.worker->worldSize,
                  c.worker->localRank, localWorkers(c));
  if (c.threadsFrom.empty())
    spdlog::log(level, "threads: {} per worker (--threads)", c.threads);
  else
    spdlog::log(level, "threads: {} per worker: {}", c.threads, c.threadsFrom);
}

}  // namespace balancenet::worker

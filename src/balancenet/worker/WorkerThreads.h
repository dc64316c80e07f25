// WorkerThreads: how many intra-op (and BLAS, and Gloo) threads a worker runs: --threads, or its share of the
// CPU its host allows it (affinity mask, cgroup quota) among the workers on that host.
#pragma once
#include "balancenet/core/CgroupLimits.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::worker {

// The workers on this worker's host: LOCAL_WORLD_SIZE when its launcher (ours, torchrun, Slurm) set it,
// else --nproc-per-node.
int localWorkers(const job::JobConfig& c);

// A worker without --threads: c.threads = max(1, floor(allowed cores / local workers)), and c.threadsFrom says
// what was found and where from (for the log line of applyWorkerThreads). `paths`: where the cgroups are.
void chooseDefaultThreads(job::JobConfig& c, const CgroupPaths& paths = {});

// Sets ATen's and the BLAS's threads to c.threads and logs the choice: info on rank 0, debug on the others.
void applyWorkerThreads(const job::JobConfig& c);

}  // namespace balancenet::worker

// CpuAllowance: the CPU this process may use (its affinity mask and its cgroups' quota) and the threads per
// worker that follow from it, so that workers under a CPU limit do not start a thread for every core.
#pragma once
#include <optional>
#include <string>

#include "balancenet/core/CgroupLimits.h"

namespace balancenet {

struct CpuAllowance {
  int affinityCores = 1;          // sched_getaffinity's CPUs (the cpuset), or the machine's cores
  std::optional<CpuQuota> quota;  // the tightest cgroup quota, if any
  double cores() const;           // the smaller of the two

  // What was found and where from: "0.45 cores (cgroup quota in /sys/fs/cgroup/cpu/x/cpu.cfs_quota_us; 2 in
  // the affinity mask)".
  std::string describe() const;
};

CpuAllowance readCpuAllowance(const CgroupPaths& paths = {});

// The CPUs in this process's affinity mask (sched_getaffinity), or the machine's cores where it cannot be read.
int affinityCores();

// max(1, floor(allowedCores / localWorkers)): a worker's share of what the host allows it, never 0.
int threadsPerWorker(double allowedCores, int localWorkers);

}  // namespace balancenet

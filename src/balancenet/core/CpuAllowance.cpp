// CpuAllowance: sched_getaffinity for the CPUs this process may run on, CgroupLimits for its time on them.
#include "balancenet/core/CpuAllowance.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>

namespace balancenet {

double CpuAllowance::cores() const {
  return quota ? std::min(quota->cores, static_cast<double>(affinityCores)) : affinityCores;
}

std::string CpuAllowance::describe() const {
  if (!quota) return fmt::format("{} cores (affinity mask; no cgroup CPU quota)", affinityCores);
  return fmt::format("{:.3g} cores (cgroup quota {:.3g} cores in {}; {} in the affinity mask)", cores(), quota->cores,
                     quota->source, affinityCores);
}

int affinityCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

CpuAllowance readCpuAllowance(const CgroupPaths& paths) {
  CpuAllowance allowance;
  allowance.affinityCores = affinityCores();
  allowance.quota = readCpuQuota(paths);
  return allowance;
}

int threadsPerWorker(double allowedCores, int localWorkers) {
  // A hair of tolerance: "200000 100000" must give 2, whatever the division rounds to.
  const double share = allowedCores / std::max(1, localWorkers) + 1e-9;
  return std::max(1, static_cast<int>(std::floor(share)));
}

}  // namespace balancenet

// ForkBudget: before a launcher forks its processes, their estimated memory against what this host has available,
// so that `--workers 70000` (or `federate --clients 70000`) is one refusal line, not a machine out of memory.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "balancenet/job/JobConfig.h"

namespace balancenet::cli {

// The private memory of one balancenet process before its model's state and activations: libtorch's and Gloo's
// heaps, the data set in memory, the loader's and allocator's buffers (the shared libraries' pages are shared
// by all processes and not counted). Measured on 2026-11-25 (Debian, libtorch 1.13, OpenBLAS pthread,
// Fashion-MNIST, 2 cores): the largest RssAnon of /proc/PID/status, sampled every 0.2 s, of each worker of
// `balancenet train --workers 2 --model mlp --steps 20` was 287 and 298 MiB (the mlp's estimate: ~2 MiB), of
// each client of `balancenet federate --clients 2 --rounds 2` 191 and 239 MiB; rounded up.
inline constexpr int64_t kProcessBaselineBytes = 300ll << 20;

struct ForkBudget {
  int processes = 0;           // what the launcher would fork on this host
  int64_t modelBytes = 0;      // each process's model estimate (pipeline/MemoryEstimate: state + activations)
  int64_t availableBytes = 0;  // MemAvailable, or the cgroup's room if smaller
  std::string availableFrom;   // "MemAvailable in /proc/meminfo" or the cgroup's memory.max
  int64_t perProcessBytes() const { return kProcessBaselineBytes + modelBytes; }
};

// How many processes of `perProcessBytes` fit in `availableBytes` (0 when not one does).
int processesThatFit(int64_t perProcessBytes, int64_t availableBytes);

// Nothing when the processes fit; else the one-line refusal: the estimate, the memory available and where that
// figure came from, and the largest count of `flag` that fits (`others`: processes besides those `flag` counts,
// e.g. the federated server or the parameter servers).
std::optional<std::string> forkRefusal(const ForkBudget& budget, const std::string& flag, int others);

// The check of launchLocalWorkers: throws UsageError with forkRefusal's line unless --force. Reads MemAvailable
// (/proc/meminfo) and the cgroup memory limit; no check where neither can be read.
void checkForkBudget(const job::JobConfig& c);

}  // namespace balancenet::cli

// PlacementCheck: before any worker starts, the model's cut into pipeline stages and each worker's estimated
// memory against --memory-limit-mb, so a placement that cannot run is one error line, not one per worker.
#pragma once
#include <string>
#include <vector>

#include "balancenet/job/JobConfig.h"

namespace balancenet::cli {

// Resolves --partition against the model's blocks (a bad one is a UsageError) and, with --memory-limit-mb,
// refuses (UsageError) a placement where some worker's estimate exceeds its own cap, suggesting the smallest
// --pipeline-stages K in {2, 4, 8, ...} dividing the world whose uniform placement would fit. With --partition
// auto the planner decides what fits: refused only when no placement of that shape fits (the planner's
// UsageError). With --recompute blocks, refuses a model of one block. Builds the model only when there is something
// to check: --pipeline-stages > 1, a cap or --recompute blocks.
void checkPlacement(const job::JobConfig& c);

// One data-parallel way of holding a split, as `balancenet plan` prints it: each worker's estimate (MiB) with its
// share in the passes it would take, and whether every worker's --memory-limit-mb holds it.
struct DataParallelMode {
  std::string flags;  // what turns it on: "" (replicated, one pass), "--accumulate auto", "--recompute blocks", ...
  std::vector<double> mib;      // per worker
  std::vector<int64_t> passes;  // per worker: 1, or under --accumulate auto the fewest that fit
  bool fits = false;
  int tightest = -1;  // the worker furthest over its cap where it does not fit
};

// Every data-parallel mode for c.split (replicated in one pass; --accumulate auto; --recompute blocks with and
// without it; --shard-state alone, with passes, and with both), estimated as the start check estimates them.
std::vector<DataParallelMode> dataParallelModes(const job::JobConfig& c);

// --memory-limit-mb: "300" (every one of `workers`) or "0,0,0,200" (one per worker), in MB, each finite and
// at least 0; all zero: empty (no cap). Throws UsageError naming the flag.
std::vector<double> parseMemoryLimits(const std::string& text, int workers);

}  // namespace balancenet::cli

// RangeSearch: the best contiguous cut of K blocks into S stages for a fixed slot assignment and fixed
// micro-batch sizes, under the flushed-pipeline objective  sum_s t_s + (m - 1) max_s t_s.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>

#include "balancenet/pipeline/Partition.h"

namespace balancenet::pipeline::planner {

struct RangeProblem {
  int stages = 1;
  size_t blocks = 1;
  int micros = 1;  // m
  // t_s of stage s running blocks [first, end); +infinity where that stage does not fit its node(s).
  std::function<double(int, size_t, size_t)> stageMs;
  // What one stageMs call costs in DP cells (a stage of R lock-step replicas evaluates R slots): the scan's
  // work counts it, so that a budget of cells bounds the time whatever the shape.
  int cellCost = 1;
};

struct RangeSolution {
  Partition partition;
  double objectiveMs = 0;  // sum + (m - 1) max of its stage times
  // No cut of this problem does better: the least sum + (m - 1) x the least bottleneck.
  double lowerBoundMs = 0;
  bool exact = true;  // false when the scan stopped at maxBounds or maxCells before its proof
  double cells = 0;   // the work it took: stage-table cells (x cellCost) and DP cells
};

// Exact when `maxBounds` is 0: the bottleneck bound T is scanned over the distinct stage times in
// ascending order from the least feasible one (a min-max DP); for each T a DP over (stage, blocks covered)
// minimises sum t_s with every t_s <= T; the scan stops once (m - 1) T + (the unconstrained least sum) can
// no longer beat the best found. A positive `maxBounds` stops after that many bounds (a heuristic's quick
// evaluation; the unconstrained least-sum cut is always tried too). Either way the scan stops after about
// `maxCells` DP cells (it takes a few hundred bounds to 200 blocks), its answer then not proven exact; the
// table and the two unconstrained DPs are always done. Nothing when no cut fits.
constexpr double kExactScanCells = 5e7;
std::optional<RangeSolution> bestRanges(const RangeProblem& problem, int maxBounds = 0,
                                        double maxCells = kExactScanCells);

// C(n, k), saturated at `cap` (search sizes are compared against budgets, never needed exactly above them).
double choose(size_t n, size_t k, double cap);

// Calls `visit` with every partition of `blocks` into `stages` non-empty contiguous ranges.
void forEachPartition(size_t blocks, int stages, const std::function<void(const Partition&)>& visit);

}  // namespace balancenet::pipeline::planner

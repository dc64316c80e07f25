// CostModel: Planner.h's cost model in pieces the searches evaluate millions of times (prefix sums, one
// stage's time, one slot's memory, the balanced shares). predict() is built from these same pieces, so a
// search's objective and the prediction it returns cannot drift apart.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "balancenet/pipeline/planner/PlanInput.h"

namespace balancenet::pipeline::planner {

// Micro-batches per column for a shape: the input's M, or the launcher's default 4 x stages; data
// parallelism (one stage) does not cut its share.
int plannedMicroBatches(const PlanInput& input, int stages);

// Micro-batches one stage holds at once: peakInFlight of its schedule's action list (Schedule.h), in
// closed form; data parallelism holds its whole share once.
int inFlightMicroBatches(ScheduleKind kind, int stage, int stages, int micros);

// The input with prefix sums, so that a range's compute, parameters and memory cost O(1).
class CostTable {
 public:
  explicit CostTable(const PlanInput& input);

  const PlanInput& input() const { return input_; }
  size_t blocks() const { return input_.blocks.size(); }
  int nodes() const { return static_cast<int>(input_.nodes.size()); }

  // Forward and backward ms per sample of blocks [first, end) on `node`.
  double computeMs(int node, size_t first, size_t end) const { return msPrefix_[node][end] - msPrefix_[node][first]; }
  // One micro-batch of `u` samples through stage [first, end) on `node`, and (when `next` >= 0) its
  // activation to `next` and the gradient back: t_{s,j} of Planner.h.
  double stageMs(int node, int next, size_t first, size_t end, double u) const;
  // Whether that stage fits `node`'s cap with micro-batches of `microBatch` samples, `inFlight` held.
  bool fits(int node, size_t first, size_t end, int64_t microBatch, int inFlight) const;
  // What it would need, in bytes (MemoryEstimate.h's estimate).
  double memoryBytes(size_t first, size_t end, int64_t microBatch, int inFlight) const;
  int64_t parameters(size_t first, size_t end) const { return paramPrefix_[end] - paramPrefix_[first]; }

 private:
  const PlanInput& input_;
  std::vector<std::vector<double>> msPrefix_;  // [node][k]: sum of blockMs over blocks [0, k)
  std::vector<int64_t> paramPrefix_;
  std::vector<int64_t> memoryPrefix_;  // memoryPerSampleBytes
  int64_t stateBytesPerParameter_ = 0;
};

// Integer shares (each >= 1, summing to `total`) minimising max_j columnMs(j, b_j), for columnMs
// non-decreasing in b: each sample goes to the column that would finish it first (optimal for a max of
// non-decreasing functions).
std::vector<int64_t> balancedShares(int64_t total, int columns, const std::function<double(int, int64_t)>& columnMs);

// A column's flushed step from its stage times: sum + (m - 1) x max.
double flushedStepMs(const std::vector<double>& stageMs, int micros);

}  // namespace balancenet::pipeline::planner

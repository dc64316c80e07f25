// GoodputPlanner: the global batch B that maximises predicted goodput (Pollux, OSDI'21) when each worker
// computes its own share of B: throughput from the per-worker step-time lines, efficiency from the noise scale.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::adaptive {

// A new B must predict this much more goodput than the one in force (5%): the noise scale is itself noisy,
// and every change of B moves the lr and the split.
inline constexpr double kDefaultHysteresis = 0.05;
// Candidates: a geometric grid over [MIN, MAX], then an even grid between the best point's grid neighbours.
inline constexpr int kGridPoints = 32;
inline constexpr int kRefinePoints = 16;

// One worker's compute time for b samples, t(b) = fixedMs + msPerSample*b (the balanced policy's NodeCostModel
// line), and the most samples its memory holds (<= 0: no cap).
struct NodeLine {
  double fixedMs = 0;
  double msPerSample = 0;
  int64_t maxBatch = 0;
};

struct GoodputInput {
  std::vector<NodeLine> nodes;             // per rank; msPerSample > 0, fixedMs >= 0
  double syncMs = 0;                       // per-step time that does not grow with B (the gradient all-reduce)
  int64_t minBatch = 0, maxBatch = 0;      // --global-batch auto:MIN:MAX, 0 < MIN <= MAX
  int64_t baseBatch = 0;                   // M0: the batch the lr is tuned for (efficiency 1 there)
  double noiseScale = -1;                  // smoothed B_noise; < 0: not known yet
  std::vector<double> shares;              // empty: each B split by the balanced optimum (minimizeMaxTime);
                                           // else fixed proportions per rank (the policy's split, e.g. equal)
  int64_t currentBatch = 0;                // B in force
  double hysteresis = kDefaultHysteresis;  // keep currentBatch unless the best predicts more goodput by this
};

struct GoodputChoice {
  int64_t globalBatch = 0;
  double stepMs = 0;
  double efficiency = 1;
  double goodput = 0;  // base-batch-equivalent samples per second: B / step x efficiency
  std::string note;    // why, for splits.csv and the log
};

// Pollux's statistical efficiency (phi + B0) / (phi + B): the progress one sample at `batch` makes relative to
// one at `baseBatch` (> 1 below it). 1 when the noise scale is unknown (< 0); throws InternalError unless
// both batches are positive.
double statisticalEfficiency(double noiseScale, int64_t baseBatch, int64_t batch);

// max_i t_i(b_i) + syncMs for the split of `batch` that `in` implies: the balanced optimum under the caps, or
// the fixed shares (largest remainder, each >= 1). Infinity when no such split fits: fewer samples than
// workers, more than the caps hold, or a fixed share above its worker's cap.
double predictedStepMs(const GoodputInput& in, int64_t batch);

// The B to use from now on; see docs/allocation.md, "Choosing the global batch (goodput)". Throws
// InternalError for inputs outside the ranges documented above (they come from code, not from users).
GoodputChoice chooseGlobalBatch(const GoodputInput& in);

}  // namespace balancenet::adaptive

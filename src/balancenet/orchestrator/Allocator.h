// Allocator: where the trainer gets each step's split from. The trainer knows no policy, only this.
#pragma once
#include <string>
#include <vector>

#include "balancenet/core/Split.h"
#include "balancenet/metrics/StepRecord.h"

namespace balancenet::orchestrator {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // The split for `step`. Must return the same value on every rank (a collective decision).
  virtual Split splitFor(int64_t step) = 0;
  // What this rank measured in the step just finished: the feedback live policies learn from.
  virtual void observe(const metrics::StepRecord& mine) {}
  // Whether the trainer should measure the gradient norms that observe() reads (StepRecord::gradSqLocal,
  // gradSq): an allocator that chooses B from the gradient noise scale needs them.
  virtual bool needsGradientNorms() const { return false; }
  // The factor the learning rate of the step just split is multiplied by (a larger B may take a larger
  // rate); the same on every rank.
  virtual double lrFactor() const { return 1; }
  // The smoothed gradient noise scale, for steps.csv; < 0: not measured.
  virtual double noiseScale() const { return -1; }
  // What a restarted run needs to decide as this one would have (the split in force, fitted node
  // models), for checkpoints; empty: nothing beyond the flags. Rank 0's is the one that matters.
  virtual std::string saveState() const { return {}; }
  // Restores saveState()'s text on every rank, before the first step; empty text: stay as built.
  // Throws RuntimeFailure for text it cannot read.
  virtual void loadState(const std::string& state) {}
};

}  // namespace balancenet::orchestrator

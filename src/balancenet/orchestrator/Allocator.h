// Allocator: where the trainer gets each step's split from. The trainer knows no policy, only this.
#pragma once
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
};

}  // namespace balancenet::orchestrator

// BatchSizer: decides the global batch B at the orchestrator's decision steps (--global-batch auto); the policy
// then splits that B. The orchestrator knows no sizer but this, as the trainer knows no policy.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/core/Split.h"
#include "balancenet/metrics/StepRecord.h"
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

struct BatchChoice {
  int64_t globalBatch = 0;
  double lrFactor = 1;  // the factor the learning rate is multiplied by while this B is in force
  std::string note;     // why, for splits.csv and the log
};

class BatchSizer {
 public:
  virtual ~BatchSizer() = default;
  // Rank 0, at a decision step, before the policy: the B to split from input.step on. input.globalBatch is the
  // B in force, input.nodes the window's metrics, except that waitMs is still each node's whole mean sync time
  // (the policy sees it less the least of them, the part spent waiting).
  virtual BatchChoice choose(const PolicyInput& input) = 0;
  // Every rank, every step, in order: the records the allocator observes (their gradient norms are the same
  // on every rank) and the split they were taken with.
  virtual void observe(const metrics::StepRecord& mine, const Split& split) = 0;
  // Whether `step` must be a decision step although the rebalance period does not say so (a scheduled change
  // of B). The same on every rank.
  virtual bool mustDecideAt(int64_t step) const { return false; }
  // The smoothed gradient noise scale for steps.csv; < 0: not known yet.
  virtual double noiseScale() const = 0;
  // What a restarted run needs to decide as this one would have (JSON); loadState throws RuntimeFailure for
  // text it cannot read.
  virtual std::string saveState() const = 0;
  virtual void loadState(const std::string& state) = 0;
};

}  // namespace balancenet::orchestrator

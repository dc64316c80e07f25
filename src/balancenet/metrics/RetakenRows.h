// RetakenRows: after a re-formed group restored the state of step `step`, the rows of the steps after it are
// taken again by the new group: their old rows go. An evaluation at `step` itself was of the restored state and
// stays. What a train worker's run loop and a Python session both do.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepRecord.h"

namespace balancenet::metrics {

inline void dropRetakenRows(std::vector<StepRecord>& records, std::vector<EvalPoint>& evals, int64_t step) {
  while (!records.empty() && records.back().step >= step) records.pop_back();
  while (!evals.empty() && evals.back().step > step) evals.pop_back();
}

}  // namespace balancenet::metrics

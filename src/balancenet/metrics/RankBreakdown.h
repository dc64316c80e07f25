// RankBreakdown: where each rank's steps went (medians over the run's second half), and which rank the exchange
// waits for: what a user reads first when a cluster runs below the sum of its hosts (issue 55).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/metrics/StepTable.h"

namespace balancenet::metrics {

struct RankTimes {
  int rank = 0;
  double batch = 0, computeMs = 0, ownMs = 0, syncMs = 0, waitMs = 0, throttledMs = 0, stepMs = 0;
};

struct RankBreakdown {
  int64_t fromStep = 0, toStep = 0;  // the steps the medians cover
  std::vector<RankTimes> ranks;      // in rank order
  // The rank the others wait for: the one that waits least, where another waits over a tenth of the step; -1 when
  // nobody waits that long (the ranks arrive together). othersWaitMs: the median of the others' waits.
  int heldBy = -1;
  double othersWaitMs = 0;
};

// Medians per rank over the second half of the table's steps (stage-0 rows: a pipeline's columns). An empty table
// gives no ranks.
RankBreakdown breakdownByRank(const StepTable& table);

// One line per rank and the verdict, for the log at the end of a run.
std::string describe(const RankBreakdown& b);
nlohmann::json toJson(const RankBreakdown& b);

}  // namespace balancenet::metrics

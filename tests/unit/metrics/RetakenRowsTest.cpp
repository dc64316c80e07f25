// After a re-form restored the state of s steps done: the rows of steps s and later go, an evaluation after s
// steps stays.
#include "balancenet/metrics/RetakenRows.h"

#include <gtest/gtest.h>

namespace balancenet::metrics {
namespace {

TEST(RetakenRows, StepsFromTheRestoredOneGoAndItsEvaluationStays) {
  std::vector<StepRecord> records;
  for (int64_t step = 0; step < 6; ++step)
    for (int rank = 0; rank < 2; ++rank) records.push_back(StepRecord{step, rank});
  std::vector<EvalPoint> evals(3);
  evals[0].step = 2, evals[1].step = 4, evals[2].step = 5;
  dropRetakenRows(records, evals, 4);  // the restored state has 4 steps done: rows of steps 4 and 5 go
  ASSERT_EQ(records.size(), 8u);
  EXPECT_EQ(records.back().step, 3);
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals.back().step, 4);
  dropRetakenRows(records, evals, 0);
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(evals.size(), 0u);
}

}  // namespace
}  // namespace balancenet::metrics

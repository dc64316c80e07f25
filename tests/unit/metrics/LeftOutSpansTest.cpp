// LeftOutSpans: a rank's stretches at a share of 0, read off the step records (summary.json's left_out).
#include <gtest/gtest.h>

#include "balancenet/metrics/LeftOutSpans.h"

namespace balancenet::metrics {
namespace {

TEST(LeftOutSpans, ConsecutiveStepsAtZeroAreOneSpanPerRank) {
  std::vector<StepRecord> records;
  // rank 3 out for steps 2-4 and 7; rank 1 out at step 5; everyone else in.
  for (int64_t step = 0; step < 9; ++step)
    for (int rank = 0; rank < 4; ++rank) {
      StepRecord r;
      r.step = step;
      r.rank = rank;
      const bool out = (rank == 3 && ((step >= 2 && step <= 4) || step == 7)) || (rank == 1 && step == 5);
      r.batch = out ? 0 : 10;
      records.push_back(r);
    }
  const auto spans = leftOutSpans(StepTable(records));
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].rank, 1);
  EXPECT_EQ(spans[0].fromStep, 5);
  EXPECT_EQ(spans[0].toStep, 6);
  EXPECT_EQ(spans[1].rank, 3);
  EXPECT_EQ(spans[1].fromStep, 2);
  EXPECT_EQ(spans[1].toStep, 5);
  EXPECT_EQ(spans[2].fromStep, 7);
  EXPECT_EQ(describe(spans, 9).find("rank 3 left out of the exchange for steps 2-4 (3 of 9)") != std::string::npos,
            true)
      << describe(spans, 9);
  EXPECT_EQ(toJson(spans)[1]["to_step"], 5);
  EXPECT_TRUE(leftOutSpans(StepTable({})).empty());
}

}  // namespace
}  // namespace balancenet::metrics

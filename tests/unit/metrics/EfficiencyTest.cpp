// Achieved training FLOP/s per worker against its sgemm peak: the arithmetic and the printed forms.
#include <gtest/gtest.h>

#include "balancenet/metrics/Efficiency.h"

namespace balancenet::metrics {
namespace {

// StepRecord's first fields: step, rank, batch, compute ms.
TEST(Efficiency, EachRankAgainstItsOwnPeakTimesItsThreads) {
  // Two steps; rank 0 trains 100 samples in 500 ms of compute, rank 1 trains 40 in 200 ms; 2 s of training.
  StepTable table({{0, 0, 50, 250}, {0, 1, 20, 100}, {1, 0, 50, 250}, {1, 1, 20, 100}});
  const std::vector<GemmPeak> peaks{{10e9, 18e9, 2}, {5e9, 5e9, 1}};
  const auto w = workerEfficiency(table, peaks, {2, 1}, /*flopsPerSample=*/1e8, /*trainSeconds=*/2.0);
  ASSERT_EQ(w.size(), 2u);
  // Rank 0: 3 x 1e8 x 100 / 2 s = 15 GFLOP/s, of 2 threads x 10 = 0.75; over its 0.5 s of compute: 3.0.
  EXPECT_DOUBLE_EQ(w[0].achievedFlops, 15e9);
  EXPECT_DOUBLE_EQ(w[0].fractionOfPeak, 0.75);
  EXPECT_DOUBLE_EQ(w[0].computeFraction, 3.0);
  EXPECT_EQ(w[0].threads, 2);
  // Rank 1: 3 x 1e8 x 40 / 2 s = 6 GFLOP/s, of 1 x 5 = 1.2 (its own peak, not rank 0's).
  EXPECT_EQ(w[1].rank, 1);
  EXPECT_DOUBLE_EQ(w[1].achievedFlops, 6e9);
  EXPECT_DOUBLE_EQ(w[1].fractionOfPeak, 1.2);
  EXPECT_DOUBLE_EQ(w[1].peak.allThreads, 5e9);
}

TEST(Efficiency, UnknownPeakOrTimeGivesZeroNotInfinity) {
  StepTable table({{0, 0, 10, 0}});
  const auto w = workerEfficiency(table, {}, {}, 1e6, 0.0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].achievedFlops, 0);
  EXPECT_EQ(w[0].fractionOfPeak, 0);
  EXPECT_EQ(w[0].computeFraction, 0);
}

TEST(Efficiency, JsonAndProgressLineNameEveryRank) {
  StepTable table({{0, 0, 50, 250}, {0, 1, 20, 100}});
  const auto w = workerEfficiency(table, {{95e9, 180e9, 2}, {95e9, 180e9, 2}}, {1, 1}, 1e8, 0.25);
  const auto j = toJson(w);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["rank"], 1);
  EXPECT_DOUBLE_EQ(j[0]["peak_gflops_one_thread"].get<double>(), 95);
  EXPECT_DOUBLE_EQ(j[0]["achieved_gflops"].get<double>(), 60);
  EXPECT_EQ(formatEfficiency(w),
            "rank 0: 60.0 GFLOP/s, 0.63 of peak (1 x 95.0); rank 1: 24.0 GFLOP/s, 0.25 of peak "
            "(1 x 95.0)");
}

}  // namespace
}  // namespace balancenet::metrics

// RankBreakdown: per-rank medians of the run's second half, and the rank the exchange waits for.
#include <gtest/gtest.h>

#include "balancenet/metrics/RankBreakdown.h"

namespace balancenet::metrics {
namespace {

// One step of a rank: compute, own work, sync (the rank that syncs least waits for nobody), step time.
StepRecord at(int64_t step, int rank, double computeMs, double ownMs, double syncMs, double stepMs) {
  StepRecord r;
  r.step = step;
  r.rank = rank;
  r.batch = rank == 3 ? 6 : 40;
  r.computeMs = computeMs;
  r.ownMs = ownMs;
  r.syncMs = syncMs;
  r.updateMs = stepMs;
  return r;
}

// T1's shape before issue 55 (the timeline's numbers): three hosts sync 75 ms a step, 50 of it waiting for the
// 0.11-core host, which syncs 25; the first half (trials, decisions) is left out of the medians.
TEST(RankBreakdown, NamesTheRankTheOthersWaitFor) {
  std::vector<StepRecord> records;
  for (int64_t s = 0; s < 10; ++s) {
    const double noisy = s < 5 ? 400 : 0;  // the first half's steps would move every median
    for (int r = 0; r < 3; ++r) records.push_back(at(s, r, 97 + noisy, 2, 75 + noisy, 186));
    records.push_back(at(s, 3, 97, 60, 25, 186));
  }
  const auto b = breakdownByRank(StepTable(records));
  EXPECT_EQ(b.fromStep, 5);
  EXPECT_EQ(b.toStep, 9);
  ASSERT_EQ(b.ranks.size(), 4u);
  EXPECT_DOUBLE_EQ(b.ranks[0].computeMs, 97);
  EXPECT_DOUBLE_EQ(b.ranks[0].waitMs, 50);
  EXPECT_DOUBLE_EQ(b.ranks[3].ownMs, 60);
  EXPECT_DOUBLE_EQ(b.ranks[3].batch, 6);
  EXPECT_EQ(b.heldBy, 3);
  EXPECT_DOUBLE_EQ(b.othersWaitMs, 50);
  const std::string text = describe(b);
  EXPECT_NE(text.find("the exchange waits for rank 3: the others wait 50.0 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 3: 6 samples, compute 97.0, own work 60.0"), std::string::npos) << text;
  const auto j = toJson(b);
  EXPECT_EQ(j.at("exchange_waits_for").get<int>(), 3);
  EXPECT_DOUBLE_EQ(j.at("ranks").at(3).at("own_ms").get<double>(), 60);
}

// Ranks that arrive together (waits under a tenth of the step) are held by nobody.
TEST(RankBreakdown, RanksArrivingTogetherAreHeldByNobody) {
  std::vector<StepRecord> records;
  for (int64_t s = 0; s < 6; ++s)
    for (int r = 0; r < 4; ++r) records.push_back(at(s, r, 80, 2, 20 + r, 110));
  const auto b = breakdownByRank(StepTable(records));
  EXPECT_EQ(b.heldBy, -1);
  EXPECT_TRUE(toJson(b).at("exchange_waits_for").is_null());
  EXPECT_NE(describe(b).find("reach the exchange together"), std::string::npos);
  EXPECT_TRUE(breakdownByRank(StepTable({})).ranks.empty());
}

}  // namespace
}  // namespace balancenet::metrics

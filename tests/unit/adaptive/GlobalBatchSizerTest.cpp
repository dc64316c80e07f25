// The orchestrator's BatchSizer: no move while the noise scale is young, B grown where the nodes' lines and a
// noisy gradient say so, a schedule's own decision steps, and a state that decides on as the original.
#include <gtest/gtest.h>

#include "balancenet/adaptive/GlobalBatchSizer.h"
#include "balancenet/core/Error.h"

namespace balancenet::adaptive {
namespace {

// Two nodes at 1 and 2 ms per sample over a window at split `s`, each with 10 ms of all-reduce.
orchestrator::PolicyInput window(const Split& s, int64_t step) {
  orchestrator::PolicyInput in;
  in.step = step;
  in.globalBatch = s.total();
  in.current = s;
  for (int r = 0; r < 2; ++r) {
    orchestrator::NodeMetrics m;
    m.rank = r;
    m.batch = s.batches[r];
    const double ms = (r + 1.0) * static_cast<double>(s.batches[r]);
    for (int k = 0; k < 4; ++k) m.recent.push_back({s.batches[r], ms});
    m.computeMs = ms;
    m.waitMs = 10;
    in.nodes.push_back(m);
  }
  return in;
}

// Norms of a step whose per-sample gradient is mostly noise (B_noise about 1000): |G|^2 = 1, tr(S) = 1000;
// each step measured at `stepMs`.
void observeNoisy(GlobalBatchSizer& sizer, const Split& s, int steps, double stepMs = 0) {
  for (int i = 0; i < steps; ++i) {
    metrics::StepRecord r;
    r.step = i + 1;
    r.updateMs = stepMs;
    const double B = static_cast<double>(s.total());
    r.gradSq = 1 + 1000 / B;           // E|g|^2
    r.gradSqLocal = 1 + 2 * 1000 / B;  // E[A] with n = 2
    sizer.observe(r, s);
  }
}

TEST(GlobalBatchSizer, WaitsForTenStepsOfNormsThenGrowsBForANoisyGradient) {
  BatchSizing sizing;
  sizing.mode = BatchSizing::Mode::Auto;
  sizing.minBatch = 16;
  sizing.maxBatch = 1024;
  GlobalBatchSizer sizer(sizing, LrScaling::AdaScale, 16, true);
  const Split s{{8, 8}};
  observeNoisy(sizer, s, GlobalBatchSizer::kMinNoiseSamples - 1);
  auto early = sizer.choose(window(s, 10));
  EXPECT_EQ(early.globalBatch, 16) << early.note;
  EXPECT_EQ(early.lrFactor, 1);
  observeNoisy(sizer, s, 1);
  EXPECT_NEAR(sizer.noiseScale(), 1000, 1);
  const auto grown = sizer.choose(window(s, 15));
  EXPECT_GT(grown.globalBatch, 64) << grown.note;
  EXPECT_LE(grown.globalBatch, 1024);
  // AdaScale's gain at phi = 1000: B (phi + B0) / (B0 (phi + B)).
  const double b = static_cast<double>(grown.globalBatch);
  EXPECT_NEAR(grown.lrFactor, b * 1016 / (16 * (1000 + b)), 0.05 * grown.lrFactor) << grown.note;

  // A restored sizer decides as the original.
  GlobalBatchSizer restored(sizing, LrScaling::AdaScale, 16, true);
  restored.loadState(sizer.saveState());
  EXPECT_EQ(restored.choose(window(s, 20)).globalBatch, sizer.choose(window(s, 20)).globalBatch);
  EXPECT_THROW(restored.loadState("{\"noise\": 3}"), RuntimeFailure);
}

// Steps measured far longer than the lines' compute (slow links, say) leave a large fixed cost per step, which
// a larger B amortises: the same noise scale then buys a larger B.
TEST(GlobalBatchSizer, TheUnexplainedPartOfAMeasuredStepCountsAsFixed) {
  BatchSizing sizing;
  sizing.mode = BatchSizing::Mode::Auto;
  sizing.minBatch = 16;
  sizing.maxBatch = 4096;
  const Split s{{8, 8}};
  auto chosen = [&](double stepMs) {
    GlobalBatchSizer sizer(sizing, LrScaling::AdaScale, 16, true);
    observeNoisy(sizer, s, GlobalBatchSizer::kMinNoiseSamples, stepMs);
    return sizer.choose(window(s, 10)).globalBatch;
  };
  const int64_t quick = chosen(26), slow = chosen(2000);  // compute at 8,8 is 16 ms, the sync 10
  EXPECT_GT(slow, 2 * quick) << quick << " vs " << slow;
}

TEST(GlobalBatchSizer, ScheduleDecidesAtItsOwnStepsWithItsRate) {
  int64_t first = 0;
  const BatchSizing sizing = parseGlobalBatch("32,64@7,128@20", first);
  GlobalBatchSizer sizer(sizing, LrScaling::Linear, first, true);
  EXPECT_FALSE(sizer.mustDecideAt(0));
  EXPECT_TRUE(sizer.mustDecideAt(7));
  EXPECT_FALSE(sizer.mustDecideAt(8));
  EXPECT_TRUE(sizer.mustDecideAt(20));
  const Split s{{16, 16}};
  const auto at7 = sizer.choose(window(s, 7));
  EXPECT_EQ(at7.globalBatch, 64);
  EXPECT_DOUBLE_EQ(at7.lrFactor, 2);
  EXPECT_EQ(sizer.choose(window(s, 25)).globalBatch, 128);
}

}  // namespace
}  // namespace balancenet::adaptive

// Progress line formatting.
#include <gtest/gtest.h>

#include "balancenet/metrics/ProgressLine.h"

namespace balancenet::metrics {
namespace {

TEST(ProgressLine, ShowsRateLossAndEta) {
  auto line = formatProgress({100, 400, 10.0, 12800, 0.51234});
  EXPECT_EQ(line, "step 100/400 (25%)  1280.0 samples/s  loss 0.5123  ETA 30s");
}

TEST(ProgressLine, RoundsShowTheTestAccuracyInsteadOfALoss) {
  Progress p{3, 10, 30.0, 6000};
  p.unit = "round";
  EXPECT_EQ(formatProgress(p), "round 3/10 (30%)  200.0 samples/s  ETA 1m10s");
  p.testAccuracy = 0.6123;
  EXPECT_EQ(formatProgress(p), "round 3/10 (30%)  200.0 samples/s  test accuracy 61.23%  ETA 1m10s");
  p.clientAccuracy = 0.589;  // federated evaluation's
  EXPECT_EQ(formatProgress(p),
            "round 3/10 (30%)  200.0 samples/s  test accuracy 61.23%  client accuracy 58.90%  ETA 1m10s");
}

// A time budget ends the run first: 10 of 100000 rounds in 50 s would take 138 h; the budget of 300 s ends it in 250.
TEST(ProgressLine, ATimeBudgetBoundsTheEta) {
  Progress p{10, 100000, 50, 4000};
  p.unit = "round";
  EXPECT_NE(formatProgress(p).find("ETA 138h"), std::string::npos) << formatProgress(p);
  p.budgetSeconds = 300;
  EXPECT_NE(formatProgress(p).find("ETA 4m10s"), std::string::npos) << formatProgress(p);
  p.elapsedSeconds = 301;
  EXPECT_NE(formatProgress(p).find("ETA 0s"), std::string::npos) << formatProgress(p);
}

TEST(ProgressLine, Durations) {
  EXPECT_EQ(formatDuration(45), "45s");
  EXPECT_EQ(formatDuration(192), "3m12s");
  EXPECT_EQ(formatDuration(3720), "1h02m");
  EXPECT_EQ(formatDuration(-1), "?");
  EXPECT_EQ(formatProgress({0, 10, 0, 0, 1}).find("ETA ?") != std::string::npos, true);
}

}  // namespace
}  // namespace balancenet::metrics

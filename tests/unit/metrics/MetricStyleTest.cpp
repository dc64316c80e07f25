// MetricStyle: evaluation lines and summary fields for samples, token windows and regression.
#include <gtest/gtest.h>

#include <cmath>

#include "balancenet/metrics/MetricStyle.h"
#include "balancenet/metrics/ProgressLine.h"

namespace balancenet::metrics {
namespace {

TEST(MetricStyle, EvaluationLinesSayWhatTheTargetsAre) {
  const EvalPoint p{10, 0.5, std::log(4.0), 0};
  EXPECT_EQ(formatEval(p, {}), "test accuracy 50.00%  test loss 1.3863");
  MetricStyle text{"tokens", 128, true, true, true};
  EXPECT_EQ(formatEval(p, text), "val loss 1.3863  perplexity 4.000  2.000 bits/byte  token accuracy 50.00%");
  MetricStyle mse;
  mse.accuracy = false;
  EXPECT_EQ(formatEval({1, 0, 0.25, 0}, mse), "test mse 0.25");
}

TEST(MetricStyle, TokenRunsReportTokensPerSecondAndPerplexity) {
  RunSummary s;
  s.samplesPerSecond = 10;
  s.evals.push_back({5, 0.3, std::log(8.0), 1});
  addStyleFields(s, MetricStyle{"tokens", 64, true, true, true});
  EXPECT_DOUBLE_EQ(s.extra["tokens_per_second"].get<double>(), 640);
  EXPECT_NEAR(s.extra["final_perplexity"].get<double>(), 8, 1e-9);
  EXPECT_NEAR(s.extra["final_bits_per_byte"].get<double>(), 3, 1e-9);
  RunSummary images;
  addStyleFields(images, {});
  EXPECT_TRUE(images.extra.empty());

  Progress p{4, 8, 2.0, 100};
  p.rateUnit = "tokens";
  p.unitsPerSample = 64;
  EXPECT_NE(formatProgress(p).find("3200.0 tokens/s"), std::string::npos) << formatProgress(p);
}

}  // namespace
}  // namespace balancenet::metrics

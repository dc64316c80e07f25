// summary.json's fields from a RunSummary: each rank's peak memory and their maximum.
#include <gtest/gtest.h>

#include "balancenet/metrics/RunSummary.h"

namespace balancenet::metrics {
namespace {

TEST(RunSummary, PeakMemoryPerRankInRankOrderAndTheirMaximum) {
  RunSummary summary;
  summary.peakMemoryMb = {310.5, 402.25, 298.0};
  const auto j = summary.toJson();
  EXPECT_EQ(j.at("peak_memory_mb").get<std::vector<double>>(), (std::vector<double>{310.5, 402.25, 298.0}));
  EXPECT_DOUBLE_EQ(j.at("peak_memory_mb_max").get<double>(), 402.25);
}

TEST(RunSummary, NoPeakMemoryKeysWhenNoneWasMeasured) {
  const auto j = RunSummary{}.toJson();
  EXPECT_FALSE(j.contains("peak_memory_mb"));
  EXPECT_FALSE(j.contains("peak_memory_mb_max"));
}

}  // namespace
}  // namespace balancenet::metrics

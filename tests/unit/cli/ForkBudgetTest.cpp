// ForkBudget: how many processes fit, and the one line that refuses more.
#include "balancenet/cli/ForkBudget.h"

#include <gtest/gtest.h>

#include "balancenet/cli/flags/TrainFlags.h"
#include "testing/LauncherViewTest.h"

namespace balancenet::cli {
namespace {

constexpr int64_t kMiB = 1 << 20;

TEST(ForkBudget, ProcessesThatFit) {
  EXPECT_EQ(processesThatFit(250 * kMiB, 24000 * kMiB), 96);
  EXPECT_EQ(processesThatFit(250 * kMiB, 249 * kMiB), 0);
  EXPECT_EQ(processesThatFit(250 * kMiB, 250 * kMiB), 1);
  EXPECT_EQ(processesThatFit(250 * kMiB, 0), 0);
  EXPECT_EQ(processesThatFit(0, 1000), 0);  // no estimate: nothing is said to fit
}

ForkBudget budget(int processes, int64_t availableMiB) {
  ForkBudget b;
  b.processes = processes;
  b.modelBytes = 4 * kMiB;
  b.availableBytes = availableMiB * kMiB;
  b.availableFrom = "MemAvailable in /proc/meminfo";
  return b;
}

TEST(ForkBudget, WhatFitsIsNotRefused) {
  const int64_t each = (kProcessBaselineBytes + 4 * kMiB) / kMiB;
  EXPECT_FALSE(forkRefusal(budget(3, 3 * each), "--workers", 0));
  EXPECT_TRUE(forkRefusal(budget(3, 3 * each - 1), "--workers", 0));
}

// `federate --clients 70000` on a 24 GiB machine: the line names the estimate, the memory and what fits.
TEST(ForkBudget, TheRefusalNamesTheEstimateTheMemoryAndTheLargestCountThatFits) {
  const auto line = forkRefusal(budget(70001, 24000), "--clients", 1);
  ASSERT_TRUE(line);
  const int64_t each = (kProcessBaselineBytes + 4 * kMiB) / kMiB;
  const int fit = static_cast<int>(24000 / each);
  EXPECT_EQ(line->rfind(
                "--clients 70000 would start 70001 processes of an estimated " + std::to_string(each) + " MiB each", 0),
            0u)
      << *line;
  EXPECT_NE(line->find("24000 MiB is available (MemAvailable in /proc/meminfo)"), std::string::npos) << *line;
  EXPECT_NE(line->find("at most --clients " + std::to_string(fit - 1) + " fit (with 1 more process beside them)"),
            std::string::npos)
      << *line;
  EXPECT_NE(line->find("--force"), std::string::npos) << *line;
  EXPECT_EQ(line->find('\n'), std::string::npos);
  // Not even the others fit: "at most --workers 0".
  EXPECT_NE(forkRefusal(budget(3, 10), "--workers", 1)->find("at most --workers 0 fit"), std::string::npos);
}

class ForceFlag : public LauncherViewTest {};

TEST_F(ForceFlag, ForceIsAFlagOfTheLauncher) {
  EXPECT_FALSE(parseTrainCommandLine({}).launch.force);
  EXPECT_TRUE(parseTrainCommandLine({"--workers", "2", "--force"}).launch.force);
}

}  // namespace
}  // namespace balancenet::cli

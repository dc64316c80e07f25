// CpuThrottleSampler on made-up cgroup files: the binding quota's cpu.stat, deltas, and zeros where nothing is read.
#include "balancenet/metrics/CpuThrottleSampler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/TempDir.h"

namespace balancenet::metrics {
namespace {

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(CpuThrottleSampler, ReadsTheQuotaGroupsCountersAndTheirGrowth) {
  testing::TempDir tmp;
  write(tmp.file("self"), "0::/testbed/h1\n");
  write(tmp.file("fs/cgroup.controllers"), "cpu\n");
  write(tmp.file("fs/testbed/h1/cpu.max"), "11000 100000\n");
  write(tmp.file("fs/testbed/h1/cpu.stat"), "usage_usec 5\nnr_periods 9\nnr_throttled 4\nthrottled_usec 30000\n");
  CpuThrottleSampler sampler({tmp.file("fs"), tmp.file("self")});
  EXPECT_EQ(sampler.file(), tmp.file("fs/testbed/h1/cpu.stat"));
  const auto before = sampler.read();
  EXPECT_EQ(before.periods, 4);
  sampler.markStepStart();
  write(tmp.file("fs/testbed/h1/cpu.stat"), "usage_usec 9\nnr_periods 19\nnr_throttled 11\nthrottled_usec 92500\n");
  StepRecord record;
  sampler.stampStep(record);
  EXPECT_EQ(record.throttledPeriods, 7);
  EXPECT_DOUBLE_EQ(record.throttledMs, 62.5);
  EXPECT_EQ(throttlingBetween(sampler.read(), before).periods, 0);  // counters that went back count nothing
}

TEST(CpuThrottleSampler, WithoutAQuotaOrAReadableStatItReadsZeros) {
  testing::TempDir tmp;
  write(tmp.file("self"), "4:cpu,cpuacct:/\n");
  write(tmp.file("fs/cpu,cpuacct/cpu.cfs_quota_us"), "-1\n");
  write(tmp.file("fs/cpu,cpuacct/cpu.cfs_period_us"), "100000\n");
  write(tmp.file("fs/cpu,cpuacct/cpu.stat"), "nr_periods 0\nnr_throttled 3\nthrottled_time 5000\n");
  const CpuThrottleSampler unlimited({tmp.file("fs"), tmp.file("self")});
  EXPECT_EQ(unlimited.file(), "");
  EXPECT_EQ(unlimited.read().periods, 0);
  EXPECT_EQ(CpuThrottleSampler::ofFile(tmp.file("missing/cpu.stat")).read().periods, 0);
  write(tmp.file("garbage.stat"), "not a cpu.stat\n");
  EXPECT_EQ(CpuThrottleSampler::ofFile(tmp.file("garbage.stat")).read().throttledUs, 0);
  EXPECT_EQ(CpuThrottleSampler::ofFile(tmp.file("fs/cpu,cpuacct/cpu.stat")).read().throttledUs, 5);  // v1: ns
}

}  // namespace
}  // namespace balancenet::metrics

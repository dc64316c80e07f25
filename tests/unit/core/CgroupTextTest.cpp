// CgroupText: the kernel's cgroup file formats, v2 and v1, as numbers.
#include "balancenet/core/CgroupText.h"

#include <gtest/gtest.h>

namespace balancenet {
namespace {

TEST(CgroupText, CpuMaxIsQuotaOverPeriodAndMaxIsNoQuota) {
  EXPECT_DOUBLE_EQ(cpuMaxCores("45000 100000\n").value(), 0.45);
  EXPECT_DOUBLE_EQ(cpuMaxCores("200000 100000").value(), 2.0);
  EXPECT_FALSE(cpuMaxCores("max 100000\n"));
  EXPECT_FALSE(cpuMaxCores("max"));
  EXPECT_FALSE(cpuMaxCores(""));
  EXPECT_FALSE(cpuMaxCores("45000"));
  EXPECT_FALSE(cpuMaxCores("45000 100000 7"));
  EXPECT_FALSE(cpuMaxCores("45000x 100000"));
  EXPECT_FALSE(cpuMaxCores("45000 0"));
}

TEST(CgroupText, CfsQuotaOfMinusOneIsNoQuota) {
  EXPECT_DOUBLE_EQ(cfsQuotaCores("45000\n", "100000\n").value(), 0.45);
  EXPECT_DOUBLE_EQ(cfsQuotaCores("1000", "2222").value(), 1000.0 / 2222);
  EXPECT_FALSE(cfsQuotaCores("-1\n", "100000\n"));
  EXPECT_FALSE(cfsQuotaCores("45000", ""));
  EXPECT_FALSE(cfsQuotaCores("", "100000"));
}

TEST(CgroupText, MemoryLimitsAndTheirNoLimitSpellings) {
  EXPECT_EQ(memoryLimitBytes("536870912\n").value(), 536870912);
  EXPECT_FALSE(memoryLimitBytes("max\n"));                  // v2
  EXPECT_FALSE(memoryLimitBytes("9223372036854771712\n"));  // v1's no limit
  EXPECT_FALSE(memoryLimitBytes("12MB"));
  EXPECT_FALSE(memoryLimitBytes(""));
}

TEST(CgroupText, StatValuesByKey) {
  const std::string stat = "anon 1000\nfile 4096\ninactive_file 2048\ntotal_inactive_file 8192\n";
  EXPECT_EQ(statValue(stat, "inactive_file").value(), 2048);
  EXPECT_EQ(statValue(stat, "total_inactive_file").value(), 8192);
  EXPECT_FALSE(statValue(stat, "active_file"));
  EXPECT_FALSE(statValue("", "anon"));
}

TEST(CgroupText, ProcSelfCgroupLinesOfBothVersions) {
  const std::string hybrid =
      "12:memory:/process_api/abc\n4:cpu,cpuacct:/slurm/uid_0/job_7\n1:name=systemd:/\n0::/user.slice/a:b\n";
  const auto cpu = cgroupLine(hybrid, "cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->path, "/slurm/uid_0/job_7");
  EXPECT_EQ(cpu->mountName, "cpu,cpuacct");
  EXPECT_EQ(cgroupLine(hybrid, "memory")->path, "/process_api/abc");
  EXPECT_EQ(cgroupLine(hybrid, "")->path, "/user.slice/a:b");  // a ':' in the path is the path's
  EXPECT_FALSE(cgroupLine(hybrid, "cpuset"));
  EXPECT_FALSE(cgroupLine("4:cpuacct:/x\n", "cpu"));  // a whole controller name, not a prefix
  EXPECT_FALSE(cgroupLine("4:memory:/x\n", ""));
}

TEST(CgroupText, CpuThrottlingOfV2) {
  // A 6.x kernel's cpu.stat of a group with a quota (burst and idle lines are not ours to read).
  const auto t = cpuThrottling(
      "usage_usec 8231042\nuser_usec 7012001\nsystem_usec 1219041\ncore_sched.force_idle_usec 0\n"
      "nr_periods 412\nnr_throttled 187\nthrottled_usec 1034567\nnr_bursts 0\nburst_usec 0\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->periods, 187);
  EXPECT_EQ(t->throttledUs, 1034567);
}

TEST(CgroupText, CpuThrottlingOfV1InNanoseconds) {
  const auto t = cpuThrottling("nr_periods 90\nnr_throttled 41\nthrottled_time 2500999000\nnr_bursts 0\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->periods, 41);
  EXPECT_EQ(t->throttledUs, 2500999);
}

// What the sampler turns into zeros: no cpu controller, a field missing, text that is not a cpu.stat.
TEST(CgroupText, CpuThrottlingOfTextWithoutTheCountersIsNothing) {
  EXPECT_FALSE(cpuThrottling("usage_usec 8231042\nuser_usec 7012001\nsystem_usec 1219041\n"));  // v2, no cpu
  EXPECT_FALSE(cpuThrottling("nr_periods 3\nnr_throttled 2\n"));                                // no time
  EXPECT_FALSE(cpuThrottling("nr_periods 3\nthrottled_usec 20\n"));                             // no count
  EXPECT_FALSE(cpuThrottling("nr_throttled two\nthrottled_usec 20\n"));
  EXPECT_FALSE(cpuThrottling("nr_throttled -1\nthrottled_usec 20\n"));
  EXPECT_FALSE(cpuThrottling("\x01\x02 garbage\n"));
  EXPECT_FALSE(cpuThrottling(""));
  EXPECT_EQ(cpuThrottling("nr_throttled 0\nthrottled_usec 0").value().periods, 0);  // no final newline
}

}  // namespace
}  // namespace balancenet

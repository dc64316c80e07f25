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

}  // namespace
}  // namespace balancenet

// CgroupLimits on made-up cgroup trees in a temporary directory: v2, v1 and the tightest ancestor.
#include "balancenet/core/CgroupLimits.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "balancenet/core/CpuAllowance.h"
#include "testing/TempDir.h"

namespace balancenet {
namespace {

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// A v1 cgroup directory's quota files.
void writeCfs(const std::string& dir, const std::string& quota, const std::string& period) {
  write(dir + "/cpu.cfs_quota_us", quota + "\n");
  write(dir + "/cpu.cfs_period_us", period + "\n");
}

// A v2 cgroup directory's memory files.
void writeMemory(const std::string& dir, const std::string& max, const std::string& current,
                 const std::string& inactiveFile) {
  write(dir + "/memory.max", max + "\n");
  write(dir + "/memory.current", current + "\n");
  write(dir + "/memory.stat", "anon 1\ninactive_file " + inactiveFile + "\n");
}

// A v2 tree (cgroup.controllers at the root) with this process in /kubepods/pod1/c1.
CgroupPaths v2Tree(const testing::TempDir& tmp) {
  write(tmp.file("self"), "0::/kubepods/pod1/c1\n");
  write(tmp.file("fs/cgroup.controllers"), "cpu memory\n");
  write(tmp.file("fs/cpu.max"), "max 100000\n");
  write(tmp.file("fs/kubepods/cpu.max"), "max 100000\n");
  write(tmp.file("fs/kubepods/pod1/c1/cpu.max"), "max 100000\n");
  return {tmp.file("fs"), tmp.file("self")};
}

void expectQuota(const CgroupPaths& paths, double cores, const std::string& source) {
  const auto quota = readCpuQuota(paths);
  ASSERT_TRUE(quota);
  EXPECT_DOUBLE_EQ(quota->cores, cores);
  EXPECT_EQ(quota->source, source);
}

TEST(CgroupLimits, NoQuotaAnywhereIsNone) {
  testing::TempDir tmp;
  EXPECT_FALSE(readCpuQuota(v2Tree(tmp)));
  EXPECT_FALSE(readMemoryRoom(v2Tree(tmp)));
}

TEST(CgroupLimits, TheSmallestQuotaOfTheCgroupAndItsAncestorsWins) {
  testing::TempDir tmp;
  const auto paths = v2Tree(tmp);
  write(tmp.file("fs/kubepods/pod1/cpu.max"), "45000 100000\n");
  write(tmp.file("fs/kubepods/pod1/c1/cpu.max"), "150000 100000\n");
  expectQuota(paths, 0.45, tmp.file("fs/kubepods/pod1/cpu.max"));
}

TEST(CgroupLimits, V1QuotaUnderTheControllersMount) {
  testing::TempDir tmp;
  write(tmp.file("self"), "5:memory:/m\n4:cpu,cpuacct:/testbed/h0\n0::/\n");
  write(tmp.file("fs/unified/cgroup.controllers"), "\n");  // hybrid: v2 mounted beside, without cpu
  writeCfs(tmp.file("fs/cpu,cpuacct"), "-1", "100000");
  writeCfs(tmp.file("fs/cpu,cpuacct/testbed/h0"), "45000", "100000");
  expectQuota({tmp.file("fs"), tmp.file("self")}, 0.45, tmp.file("fs/cpu,cpuacct/testbed/h0/cpu.cfs_quota_us"));
}

TEST(CgroupLimits, TheThrottlingStatIsTheBindingQuotasGroups) {
  testing::TempDir tmp;
  const auto paths = v2Tree(tmp);
  EXPECT_FALSE(throttlingStatFile(paths));  // no quota: nothing is throttled
  write(tmp.file("fs/kubepods/pod1/cpu.max"), "45000 100000\n");
  EXPECT_EQ(throttlingStatFile(paths).value(), tmp.file("fs/kubepods/pod1/cpu.stat"));
  write(tmp.file("v1self"), "4:cpu,cpuacct:/testbed/h0\n");
  writeCfs(tmp.file("v1/cpu,cpuacct/testbed/h0"), "11000", "100000");
  EXPECT_EQ(throttlingStatFile({tmp.file("v1"), tmp.file("v1self")}).value(),
            tmp.file("v1/cpu,cpuacct/testbed/h0/cpu.stat"));
}

// Docker without a cgroup namespace: /proc/self/cgroup names the host's path, the mount is the container's own.
TEST(CgroupLimits, APathMissingUnderTheMountStillReadsTheMountsRoot) {
  testing::TempDir tmp;
  write(tmp.file("self"), "3:cpu:/docker/0123abcd\n");
  writeCfs(tmp.file("fs/cpu"), "150000", "100000");
  expectQuota({tmp.file("fs"), tmp.file("self")}, 1.5, tmp.file("fs/cpu/cpu.cfs_quota_us"));
}

TEST(CgroupLimits, MemoryRoomIsTheLimitLessWhatIsUsedBesidesReclaimableCache) {
  testing::TempDir tmp;
  const auto paths = v2Tree(tmp);
  writeMemory(tmp.file("fs/kubepods"), "8000000000", "1000000000", "0");
  writeMemory(tmp.file("fs/kubepods/pod1/c1"), "1000000000", "600000000", "200000000");
  const auto room = readMemoryRoom(paths);
  ASSERT_TRUE(room);
  EXPECT_EQ(room->limitBytes, 1000000000);
  EXPECT_EQ(room->usedBytes, 400000000);
  EXPECT_EQ(room->availableBytes(), 600000000);
  EXPECT_EQ(room->source, tmp.file("fs/kubepods/pod1/c1/memory.max"));
}

TEST(CgroupLimits, V1MemoryLimitAndItsNoLimitValue) {
  testing::TempDir tmp;
  write(tmp.file("self"), "4:memory:/job\n");
  write(tmp.file("fs/memory/memory.limit_in_bytes"), "9223372036854771712\n");
  write(tmp.file("fs/memory/job/memory.limit_in_bytes"), "536870912\n");
  write(tmp.file("fs/memory/job/memory.usage_in_bytes"), "36870912\n");
  const auto room = readMemoryRoom({tmp.file("fs"), tmp.file("self")});
  ASSERT_TRUE(room);
  EXPECT_EQ(room->availableBytes(), 500000000);
}

TEST(CgroupLimits, NoProcSelfCgroupIsNoLimit) {
  testing::TempDir tmp;
  EXPECT_FALSE(readCpuQuota({tmp.path(), tmp.file("missing")}));
  EXPECT_FALSE(readMemoryRoom({tmp.path(), tmp.file("missing")}));
}

TEST(CpuAllowance, ThreadsAreTheAllowedCoresSharedByTheLocalWorkersAndNeverZero) {
  EXPECT_EQ(threadsPerWorker(0.45, 1), 1);
  EXPECT_EQ(threadsPerWorker(2.0, 1), 2);
  EXPECT_EQ(threadsPerWorker(16, 4), 4);
  EXPECT_EQ(threadsPerWorker(16, 5), 3);
  EXPECT_EQ(threadsPerWorker(2, 8), 1);
  EXPECT_EQ(threadsPerWorker(3.9, 1), 3);
  EXPECT_EQ(threadsPerWorker(200000.0 / 100000.0, 1), 2);
  EXPECT_EQ(threadsPerWorker(0.6 * 10, 3), 2);  // 5.9999... / 3 is 2, not 1
}

TEST(CpuAllowance, TheQuotaCapsTheAffinityMaskAndTheDescriptionNamesTheSource) {
  testing::TempDir tmp;
  auto paths = v2Tree(tmp);
  write(tmp.file("fs/kubepods/cpu.max"), "45000 100000\n");
  const auto allowance = readCpuAllowance(paths);
  EXPECT_GE(allowance.affinityCores, 1);
  EXPECT_DOUBLE_EQ(allowance.cores(), 0.45);
  EXPECT_NE(allowance.describe().find(tmp.file("fs/kubepods/cpu.max")), std::string::npos) << allowance.describe();
  CpuAllowance wide{2, CpuQuota{8, "q"}};
  EXPECT_DOUBLE_EQ(wide.cores(), 2);  // a quota above the cores the mask allows changes nothing
}

}  // namespace
}  // namespace balancenet

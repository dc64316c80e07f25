// CgroupText: the text of cgroup files (cpu.max, cpu.cfs_*, memory.max, memory.stat, /proc/self/cgroup) as
// numbers. Pure functions of strings, so every format the kernel writes is a unit test.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace balancenet {

// cgroup v2 cpu.max ("45000 100000": 0.45 cores); nothing for "max 100000" (no quota) or text it cannot read.
std::optional<double> cpuMaxCores(const std::string& cpuMax);

// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us as cores; nothing for a quota of "-1" (no quota).
std::optional<double> cfsQuotaCores(const std::string& quotaUs, const std::string& periodUs);

// cgroup v2 memory.max or v1 memory.limit_in_bytes in bytes; nothing for "max", for v1's "no limit"
// (9223372036854771712, PAGE_COUNTER_MAX pages) or for text it cannot read.
std::optional<int64_t> memoryLimitBytes(const std::string& text);

// A whole-string integer (a cgroup file's one number, surrounding white space allowed); nothing otherwise.
std::optional<int64_t> cgroupNumber(const std::string& text);

// The value of `key` in a "key value" file (memory.stat, cpu.stat); nothing when the key is missing.
std::optional<int64_t> statValue(const std::string& stat, const std::string& key);

// The throttling counters of a cpu.stat: periods in which the quota ran out, and the time the group stood
// still for it. cgroup v2 writes nr_throttled and throttled_usec, v1 nr_throttled and throttled_time (ns).
struct CpuThrottling {
  int64_t periods = 0;
  int64_t throttledUs = 0;
};
// Nothing for text without nr_throttled or without either time (v2's cpu.stat lists only usage when the cpu
// controller is not enabled for the group), or with a count that is not a non-negative number.
std::optional<CpuThrottling> cpuThrottling(const std::string& cpuStat);

// This process's cgroup path in /proc/self/cgroup's text: `controller` "" is the v2 line ("0::/a/b"),
// "cpu" or "memory" the v1 line whose controller list names it ("4:cpu,cpuacct:/a/b"). With `mountName`
// the v1 line's controller list as the directory it is mounted at ("cpu,cpuacct").
struct CgroupLine {
  std::string path;       // "/a/b"
  std::string mountName;  // "cpu,cpuacct"; "" for v2
};
std::optional<CgroupLine> cgroupLine(const std::string& procSelfCgroup, const std::string& controller);

}  // namespace balancenet

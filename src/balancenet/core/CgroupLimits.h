// CgroupLimits: the CPU quota and the memory limit the kernel enforces on this process through its cgroups
// (v2 and v1), read from files under an injectable root so that a unit test can point it at a temporary tree.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace balancenet {

// Where the cgroup files are. A test makes a tree under a temporary directory and points both here.
struct CgroupPaths {
  std::string root = "/sys/fs/cgroup";           // the v2 mount, or the v1 controllers' mounts beneath it
  std::string selfCgroup = "/proc/self/cgroup";  // this process's cgroup per hierarchy
};

struct CpuQuota {
  double cores = 0;    // quota / period
  std::string source;  // the file that set it ("/sys/fs/cgroup/a/cpu.max")
};

// The smallest CPU quota of this process's cgroup and its ancestors (a parent's quota binds its children),
// across v2 cpu.max and v1 cpu.cfs_quota_us / cpu.cfs_period_us; nothing when none sets one or none can be read.
std::optional<CpuQuota> readCpuQuota(const CgroupPaths& paths = {});

// The cpu.stat beside the quota readCpuQuota finds: the group whose quota binds is the one the kernel throttles,
// and counts it for (every process in it alike). Nothing when no quota is set: then nothing is throttled.
std::optional<std::string> throttlingStatFile(const CgroupPaths& paths = {});

struct MemoryRoom {
  int64_t limitBytes = 0;  // memory.max (v2) or memory.limit_in_bytes (v1)
  int64_t usedBytes = 0;   // memory.current / memory.usage_in_bytes less the inactive page cache (reclaimable)
  std::string source;      // the file that set the limit
  int64_t availableBytes() const { return limitBytes > usedBytes ? limitBytes - usedBytes : 0; }
};

// The tightest memory limit of this process's cgroup and its ancestors (the least room left under it);
// nothing when none sets one.
std::optional<MemoryRoom> readMemoryRoom(const CgroupPaths& paths = {});

}  // namespace balancenet

// CgroupLimits: finds this process's cgroup directories (v2 unified, v1 per controller) and walks from each up
// to its mount's root, reading the limit files; the parsing is CgroupText's.
#include "balancenet/core/CgroupLimits.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "balancenet/core/CgroupText.h"

namespace balancenet {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> readText(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The directories of this process's cgroup for `controller` ("cpu", "memory") and all their ancestors, leaf
// first: in the v2 hierarchy (mounted at the root, or at root/unified beside v1 ones) and in the v1 hierarchy
// of that controller (root/cpu,cpuacct or root/cpu). Where the path is not under the mount (a container that
// mounts its own cgroup as the root) the missing directories are skipped and the mount's root still counts.
std::vector<fs::path> cgroupDirectories(const CgroupPaths& paths, const std::string& controller) {
  std::vector<fs::path> dirs;
  const auto self = readText(paths.selfCgroup);
  if (!self) return dirs;
  auto addChain = [&dirs](const fs::path& mount, const std::string& path) {
    fs::path relative = fs::path(path).relative_path();
    while (true) {
      std::error_code ec;
      if (fs::is_directory(mount / relative, ec)) dirs.push_back(mount / relative);
      if (relative.empty()) break;
      relative = relative.parent_path();
    }
  };
  const fs::path root(paths.root);
  std::error_code ec;
  if (const auto v2 = cgroupLine(*self, ""))
    for (const fs::path& mount : {root, root / "unified"})
      if (fs::exists(mount / "cgroup.controllers", ec)) {
        addChain(mount, v2->path);
        break;
      }
  if (const auto v1 = cgroupLine(*self, controller))
    for (const fs::path& mount : {root / v1->mountName, root / controller})
      if (fs::is_directory(mount, ec) && !fs::exists(mount / "cgroup.controllers", ec)) {
        addChain(mount, v1->path);
        break;
      }
  return dirs;
}

std::string fileText(const fs::path& file) { return readText(file).value_or(""); }

}  // namespace

std::optional<CpuQuota> readCpuQuota(const CgroupPaths& paths) {
  std::optional<CpuQuota> tightest;
  auto consider = [&tightest](std::optional<double> cores, const fs::path& source) {
    if (cores && (!tightest || *cores < tightest->cores)) tightest = CpuQuota{*cores, source.string()};
  };
  for (const auto& dir : cgroupDirectories(paths, "cpu")) {
    consider(cpuMaxCores(fileText(dir / "cpu.max")), dir / "cpu.max");
    consider(cfsQuotaCores(fileText(dir / "cpu.cfs_quota_us"), fileText(dir / "cpu.cfs_period_us")),
             dir / "cpu.cfs_quota_us");
  }
  return tightest;
}

std::optional<std::string> throttlingStatFile(const CgroupPaths& paths) {
  const auto quota = readCpuQuota(paths);
  if (!quota) return std::nullopt;
  return (fs::path(quota->source).parent_path() / "cpu.stat").string();
}

std::optional<MemoryRoom> readMemoryRoom(const CgroupPaths& paths) {
  std::optional<MemoryRoom> tightest;
  for (const auto& dir : cgroupDirectories(paths, "memory")) {
    // v2 names, then v1's; v1's usage counts the whole subtree, so its inactive cache is the subtree's too.
    const bool v2 = fs::exists(dir / "memory.max");
    const fs::path limitFile = dir / (v2 ? "memory.max" : "memory.limit_in_bytes");
    const auto limit = memoryLimitBytes(fileText(limitFile));
    if (!limit) continue;
    MemoryRoom room{*limit, 0, limitFile.string()};
    const auto used = cgroupNumber(fileText(dir / (v2 ? "memory.current" : "memory.usage_in_bytes")));
    const auto cache = statValue(fileText(dir / "memory.stat"), v2 ? "inactive_file" : "total_inactive_file");
    if (used) room.usedBytes = std::max<int64_t>(0, *used - cache.value_or(0));
    if (!tightest || room.availableBytes() < tightest->availableBytes()) tightest = room;
  }
  return tightest;
}

}  // namespace balancenet

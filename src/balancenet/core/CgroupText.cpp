// CgroupText: parsing cgroup files' text; nothing here opens a file.
#include "balancenet/core/CgroupText.h"

#include <charconv>
#include <sstream>

namespace balancenet {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\n") - first + 1);
}

// v1 reports "no limit" as the largest page-aligned counter; anything this large is no limit.
constexpr int64_t kUnlimitedFrom = int64_t{1} << 62;

}  // namespace

std::optional<int64_t> cgroupNumber(const std::string& text) {
  const std::string t = trimmed(text);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<double> cpuMaxCores(const std::string& cpuMax) {
  std::istringstream in(cpuMax);
  std::string quota, period, rest;
  if (!(in >> quota >> period) || (in >> rest)) return std::nullopt;
  const auto q = cgroupNumber(quota), p = cgroupNumber(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;  // "max" is not a number: no quota
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> cfsQuotaCores(const std::string& quotaUs, const std::string& periodUs) {
  const auto q = cgroupNumber(quotaUs), p = cgroupNumber(periodUs);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;  // -1: no quota
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<int64_t> memoryLimitBytes(const std::string& text) {
  const auto v = cgroupNumber(text);
  if (!v || *v < 0 || *v >= kUnlimitedFrom) return std::nullopt;
  return v;
}

std::optional<int64_t> statValue(const std::string& stat, const std::string& key) {
  std::istringstream in(stat);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name, value;
    if (words >> name >> value && name == key) return cgroupNumber(value);
  }
  return std::nullopt;
}

std::optional<CpuThrottling> cpuThrottling(const std::string& cpuStat) {
  const auto periods = statValue(cpuStat, "nr_throttled");
  std::optional<int64_t> us = statValue(cpuStat, "throttled_usec");
  if (!us)
    if (const auto ns = statValue(cpuStat, "throttled_time")) us = *ns / 1000;
  if (!periods || !us || *periods < 0 || *us < 0) return std::nullopt;
  return CpuThrottling{*periods, *us};
}

std::optional<CgroupLine> cgroupLine(const std::string& procSelfCgroup, const std::string& controller) {
  std::istringstream in(procSelfCgroup);
  std::string line;
  while (std::getline(in, line)) {
    // hierarchy-id:controller-list:path (the path may itself hold ':')
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controller.empty()) {
      if (line.substr(0, first) == "0" && controllers.empty()) return CgroupLine{path, ""};
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');)
      if (name == controller) return CgroupLine{path, controllers};
  }
  return std::nullopt;
}

}  // namespace balancenet

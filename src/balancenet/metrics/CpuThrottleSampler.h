// CpuThrottleSampler: how often and how long the kernel stalled this process's cgroup for its CPU quota, read
// from the cgroup's cpu.stat, so that a step's row can say what its quota cost it.
#pragma once
#include <string>

#include "balancenet/core/CgroupLimits.h"
#include "balancenet/core/CgroupText.h"
#include "balancenet/metrics/StepRecord.h"

namespace balancenet::metrics {

class CpuThrottleSampler {
 public:
  // Finds the cpu.stat of the group whose quota binds (once: a step then reads one small file).
  explicit CpuThrottleSampler(const CgroupPaths& paths = {});
  // Reads `statFile` ("": nothing to read, counters stay zero): benchmarks and tests.
  static CpuThrottleSampler ofFile(std::string statFile);

  // The group's counters now; zeros without a quota (nothing is throttled) or when the file cannot be read or
  // parsed: a statistic never fails a step.
  CpuThrottling read() const;
  const std::string& file() const { return file_; }

  // A step starts: its throttling is counted from here.
  void markStepStart() { atStepStart_ = read(); }
  // The step ended: its throttled_periods and throttled_ms since markStepStart().
  void stampStep(StepRecord& record) const;

 private:
  struct AtFile {};
  CpuThrottleSampler(AtFile, std::string statFile) : file_(std::move(statFile)) {}
  std::string file_;
  CpuThrottling atStepStart_;
};

// What happened between two readings; a counter that went back (the group was re-created) counts nothing.
CpuThrottling throttlingBetween(const CpuThrottling& before, const CpuThrottling& after);

}  // namespace balancenet::metrics

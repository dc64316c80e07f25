// CpuThrottleSampler: one read(2) of cpu.stat per sample, no stream machinery (it runs twice a step).
#include "balancenet/metrics/CpuThrottleSampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace balancenet::metrics {

CpuThrottleSampler::CpuThrottleSampler(const CgroupPaths& paths) : file_(throttlingStatFile(paths).value_or("")) {}

CpuThrottleSampler CpuThrottleSampler::ofFile(std::string statFile) { return {AtFile{}, std::move(statFile)}; }

CpuThrottling CpuThrottleSampler::read() const {
  if (file_.empty()) return {};
  const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buffer[2048];  // a cpu.stat is a dozen short lines
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  if (n <= 0) return {};
  return cpuThrottling(std::string(buffer, static_cast<size_t>(n))).value_or(CpuThrottling{});
}

void CpuThrottleSampler::stampStep(StepRecord& record) const {
  const CpuThrottling step = throttlingBetween(atStepStart_, read());
  record.throttledPeriods = step.periods;
  record.throttledMs = static_cast<double>(step.throttledUs) / 1000.0;
}

CpuThrottling throttlingBetween(const CpuThrottling& before, const CpuThrottling& after) {
  return {std::max<int64_t>(0, after.periods - before.periods),
          std::max<int64_t>(0, after.throttledUs - before.throttledUs)};
}

}  // namespace balancenet::metrics

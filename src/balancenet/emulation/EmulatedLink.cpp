// Emulated link arithmetic.
#include "balancenet/emulation/EmulatedLink.h"

#include <algorithm>

namespace balancenet::emulation {

EmulatedLink::EmulatedLink(const std::vector<double>& latencyMs, const std::vector<double>& bandwidthBytesPerSecond) {
  for (double l : latencyMs) latencyMs_ = std::max(latencyMs_, l);
  for (double b : bandwidthBytesPerSecond)
    if (b > 0) bandwidth_ = bandwidth_ > 0 ? std::min(bandwidth_, b) : b;
}

EmulatedLink::Clock::time_point EmulatedLink::deliveredAt(Clock::time_point start, int64_t wireBytes) {
  using Ms = std::chrono::duration<double, std::milli>;
  const double transferMs = bandwidth_ > 0 ? 1000.0 * static_cast<double>(wireBytes) / bandwidth_ : 0;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto leaves = std::max(start, linkFreeAt_);
  linkFreeAt_ = leaves + std::chrono::duration_cast<Clock::duration>(Ms(transferMs));
  return linkFreeAt_ + std::chrono::duration_cast<Clock::duration>(Ms(latencyMs_));
}

}  // namespace balancenet::emulation

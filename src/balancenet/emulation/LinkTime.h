// LinkTime: how long one message takes on an emulated link of a given latency and bandwidth.
#pragma once
#include <cstdint>

namespace balancenet::emulation {

// `delayMs` (--net-delay-ms) plus `bytes` at `bandwidthMbps` megabit/s (--net-bandwidth-mbps; 0: unlimited),
// in seconds. One message alone on its link (EmulatedLink adds the queueing of overlapping messages).
inline double linkTransferSeconds(double delayMs, double bandwidthMbps, int64_t bytes) {
  const double transfer = bandwidthMbps > 0 ? static_cast<double>(bytes) * 8 / (bandwidthMbps * 1e6) : 0;
  return delayMs / 1000 + transfer;
}

}  // namespace balancenet::emulation

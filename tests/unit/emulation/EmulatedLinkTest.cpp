// Emulated link: slowest latency, smallest bandwidth, serial transfers.
#include <gtest/gtest.h>

#include "balancenet/emulation/EmulatedLink.h"

namespace balancenet::emulation {
namespace {

double msAfter(EmulatedLink::Clock::time_point t0, EmulatedLink::Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - t0).count();
}

TEST(EmulatedLink, EveryMessagePaysTheSlowestNodesLatencyAndBandwidth) {
  EmulatedLink link({0, 5, 2}, {0, 4e6, 1e6});  // node 2: 1 MB/s, node 1: 5 ms
  EXPECT_EQ(link.latencyMs(), 5);
  EXPECT_EQ(link.bandwidthBytesPerSecond(), 1e6);
  const auto t0 = EmulatedLink::Clock::now();
  EXPECT_NEAR(msAfter(t0, link.deliveredAt(t0, 1000)), 1.0 + 5.0, 1e-6);  // 1 kB at 1 MB/s + latency
}

TEST(EmulatedLink, TransfersQueueButLatenciesOverlap) {
  EmulatedLink link({10}, {1e6});
  const auto t0 = EmulatedLink::Clock::now();
  EXPECT_NEAR(msAfter(t0, link.deliveredAt(t0, 2000)), 2 + 10, 1e-6);
  // Started at once: leaves when the first is out (2 ms), then 3 ms of transfer and the latency.
  EXPECT_NEAR(msAfter(t0, link.deliveredAt(t0, 3000)), 5 + 10, 1e-6);
  // Started after the link went idle: no queueing.
  const auto later = t0 + std::chrono::milliseconds(100);
  EXPECT_NEAR(msAfter(t0, link.deliveredAt(later, 0)), 100 + 10, 1e-6);
}

TEST(EmulatedLink, NoLimitsMeansNoDelay) {
  EmulatedLink link({}, {0, 0});
  const auto t0 = EmulatedLink::Clock::now();
  EXPECT_EQ(link.deliveredAt(t0, 1 << 30), t0);
}

}  // namespace
}  // namespace balancenet::emulation

// linkTransferSeconds: latency plus bytes at the link's bandwidth; 0 is unlimited.
#include <gtest/gtest.h>

#include "balancenet/emulation/LinkTime.h"

namespace balancenet::emulation {
namespace {

TEST(LinkTime, LatencyPlusBytesAtTheBandwidth) {
  // 4.8 MB (a cnn's weights) at 20 Mbit/s: 1.92 s; plus 50 ms.
  EXPECT_NEAR(linkTransferSeconds(50, 20, 4'800'000), 0.05 + 1.92, 1e-12);
  EXPECT_NEAR(linkTransferSeconds(0, 8, 1'000'000), 1.0, 1e-12);  // 8 Mbit at 8 Mbit/s
  EXPECT_NEAR(linkTransferSeconds(10, 0, 1'000'000'000), 0.01, 1e-12) << "bandwidth 0 is unlimited";
  EXPECT_EQ(linkTransferSeconds(0, 0, 123), 0);
  EXPECT_NEAR(linkTransferSeconds(0, 100, 0), 0, 1e-12);
}

}  // namespace
}  // namespace balancenet::emulation

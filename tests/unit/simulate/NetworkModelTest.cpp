// NetworkModel: the alpha-beta formulas and the --network text.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/simulate/NetworkModel.h"

namespace balancenet::simulate {
namespace {

TEST(NetworkModel, ParsesBandwidthAndLatencyUnits) {
  const auto m = NetworkModel::parse("ring:10gbit,5us");
  EXPECT_EQ(m.algorithm, NetworkModel::Algorithm::Ring);
  EXPECT_DOUBLE_EQ(m.bytesPerMs, 1.25e6);
  EXPECT_DOUBLE_EQ(m.latencyMs, 0.005);
  const auto t = NetworkModel::parse("tree:100mbit,2ms");
  EXPECT_EQ(t.algorithm, NetworkModel::Algorithm::Tree);
  EXPECT_DOUBLE_EQ(t.bytesPerMs, 12500);
  EXPECT_DOUBLE_EQ(t.latencyMs, 2);
  EXPECT_DOUBLE_EQ(NetworkModel::parse("ring:1gbit,1s").latencyMs, 1000);
}

TEST(NetworkModel, RejectsBadText) {
  for (const char* bad : {"ring", "ring:10gbit", "mesh:1gbit,1us", "ring:10gbps,5us", "ring:0gbit,5us", "ring:1gbit,5",
                          "ring:xgbit,5us", "ring:1gbit,-5us"})
    EXPECT_THROW(NetworkModel::parse(bad), UsageError) << bad;
}

TEST(NetworkModel, RingAllReduceIsTwoNMinusOneStepsOfOneNth) {
  NetworkModel m;  // 10 Gbit/s, 5 us
  const double bytes = 4e6;
  EXPECT_DOUBLE_EQ(m.allreduceMs(1, bytes), 0);
  EXPECT_NEAR(m.allreduceMs(4, bytes), 6 * 0.005 + 1.5 * bytes / 1.25e6, 1e-12);
  // Bandwidth term bounded by 2 bytes/bw at any N; latency term linear in N.
  EXPECT_LT(m.allreduceMs(4096, bytes), 2 * 4095 * 0.005 + 2 * bytes / 1.25e6 + 1e-9);
  m.algorithm = NetworkModel::Algorithm::Tree;
  EXPECT_NEAR(m.allreduceMs(4096, bytes), 24 * (0.005 + bytes / 1.25e6), 1e-9);  // 2 x log2(4096)
}

TEST(NetworkModel, GathersAndBroadcasts) {
  NetworkModel m;
  EXPECT_NEAR(m.allgatherMs(4096, 1000), 4095 * (0.005 + 1000 / 1.25e6), 1e-9);
  EXPECT_NEAR(m.treeGatherMs(4096, 1000), 12 * 0.005 + 4095 * 1000 / 1.25e6, 1e-9);
  EXPECT_NEAR(m.broadcastMs(5, 80), 3 * (0.005 + 80 / 1.25e6), 1e-12);
}

}  // namespace
}  // namespace balancenet::simulate

// A federated client's emulated link: picked per client, parsed from one value (federate join), the
// message size it charges, and the sleep that stands for the transfer.
#include <gtest/gtest.h>

#include <chrono>

#include "balancenet/federated/process/ClientLink.h"
#include "balancenet/federated/process/UpdateMessage.h"
#include "testing/UsageErrors.h"

namespace balancenet::federated {
namespace {

TEST(ClientLink, PerClientValuesAndNoneWhenNotGiven) {
  const ClientLink slow = clientLinkOf({0, 40}, {0, 10}, 1);
  EXPECT_EQ(slow.delayMs, 40);
  EXPECT_EQ(slow.bandwidthMbps, 10);
  EXPECT_TRUE(slow.emulated());
  EXPECT_FALSE(clientLinkOf({0, 40}, {0, 10}, 0).emulated());
  EXPECT_FALSE(clientLinkOf({}, {}, 3).emulated());
  EXPECT_EQ(clientLinkOf({}, {5, 7}, 1).bandwidthMbps, 7) << "bandwidth alone";
}

TEST(ClientLink, JoinParsesOneValueOfEach) {
  const ClientLink link = parseClientLink("25", "100");
  EXPECT_EQ(link.delayMs, 25);
  EXPECT_EQ(link.bandwidthMbps, 100);
  EXPECT_FALSE(parseClientLink("", "").emulated());
  using testing::usageErrorOf;
  EXPECT_NE(usageErrorOf([] { parseClientLink("1,2", ""); }).find("--net-delay-ms"), std::string::npos);
  EXPECT_NE(usageErrorOf([] { parseClientLink("", "-5"); }).find("--net-bandwidth-mbps"), std::string::npos);
  EXPECT_NE(usageErrorOf([] { parseClientLink("fast", ""); }).find("--net-delay-ms"), std::string::npos);
}

TEST(ClientLink, AMessageIsTheHeaderAndTheFloatModel) {
  EXPECT_EQ(messageBytes(1000), kHeaderSlots * 8 + 4000);
  // 1 M floats + header at 8 Mbit/s: ~4 s, plus the latency.
  const ClientLink link{100, 8};
  EXPECT_NEAR(transferSeconds(link, messageBytes(1'000'000)), 0.1 + (4e6 + kHeaderSlots * 8) * 8 / 8e6, 1e-9);
}

TEST(ClientLink, TheTransferIsSleptOut) {
  const auto t0 = std::chrono::steady_clock::now();
  emulateTransfer({20, 0}, 1'000'000);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 20);
  EXPECT_LT(ms, 1000);
}

}  // namespace
}  // namespace balancenet::federated

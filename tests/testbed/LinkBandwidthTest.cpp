// A rate-shaped link (tc tbf on one host's outgoing side): the node monitor measures that host's outgoing
// bandwidth, and splits.csv shows it, while the hosts whose data goes out unshaped read far more.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "TestbedFixture.h"
#include "balancenet/core/Median.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::testing {
namespace {

using LinkBandwidth = TestbedFixture;

// Each rank's bandwidth_mbps in splits.csv's decisions (the initial split, step 0, has no measurement yet).
std::map<int, std::vector<double>> bandwidthByRank(const std::string& splitsCsv) {
  const auto rows = report::readCsv(splitsCsv);
  const int step = report::column(rows[0], "step", splitsCsv), rank = report::column(rows[0], "rank", splitsCsv),
            mbps = report::column(rows[0], "bandwidth_mbps", splitsCsv);
  std::map<int, std::vector<double>> byRank;
  for (size_t i = 1; i < rows.size(); ++i)
    if (std::stoll(rows[i][step]) > 0) byRank[std::stoi(rows[i][rank])].push_back(std::stod(rows[i][mbps]));
  return byRank;
}

TEST_F(LinkBandwidth, AShapedUplinkReadsAsItsRateInSplitsCsv) {
  // Host 1's outgoing link is shaped: rank 1 sends its probe over it, while rank 0 sends to rank 1 unshaped
  // and only rank 1's 1-byte acks come back over the slow side. (An echo of the 1 MiB would read twice
  // the rate on both.)
  constexpr double kShapedMbit = 50;
  Testbed bed({"none", "none", "none"}, {0, static_cast<int>(kShapedMbit), 0});
  // A tiny model, so that the gradients take little of the shaped link beside the probe's transfers.
  const auto hosts = trainOnHosts(bed, {"--model", "mlp", "--width", "0.02", "--global-batch", "48", "--steps", "150",
                                        "--policy", "balanced", "--rebalance-every", "5"});
  for (int h = 0; h < bed.hosts(); ++h) {
    ASSERT_FALSE(hosts[h].timedOut) << "host " << h << " hung:\n" << hosts[h].output;
    ASSERT_EQ(hosts[h].exitCode, 0) << "host " << h << ":\n" << hosts[h].output;
  }
  const auto byRank = bandwidthByRank(runDir(0) + "/splits.csv");
  ASSERT_EQ(byRank.size(), 3u) << "no decision rows for every rank in splits.csv";
  std::vector<double> medians;
  for (const auto& [rank, mbps] : byRank) medians.push_back(median(mbps));
  std::printf(
      "measured outgoing bandwidth (Mbit/s, median over %zu decisions): rank 0 %.1f, rank 1 %.1f (shaped to "
      "%.0f), rank 2 %.1f\n",
      byRank.at(1).size(), medians[0], medians[1], kShapedMbit, medians[2]);
  EXPECT_NEAR(medians[1], kShapedMbit, 0.3 * kShapedMbit);
  // Data into the shaped host and between the others goes out unshaped.
  EXPECT_GT(medians[0], 3 * kShapedMbit);
  EXPECT_GT(medians[2], 3 * kShapedMbit);
}

}  // namespace
}  // namespace balancenet::testing

// Exactness across hosts: three hosts with their own addresses, a fixed unequal split, the parameters of
// one process training the whole global batch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "TestbedFixture.h"

namespace balancenet::testing {
namespace {

using MultiHostExactness = TestbedFixture;

// Without --iface too: the hosts share one hostname that resolves to 127.0.0.1, so Gloo's default device would
// advertise loopback (the job once failed at the rendezvous timeout); each host listens on its route to the master.
TEST_F(MultiHostExactness, ThreeHostsWithAnUnequalSplitMatchOneProcess) {
  namesIface_ = false;
  Testbed bed({"none", "none", "none"});
  const std::vector<std::string> common{"--model",    "mlp", "--global-batch", "32",   "--steps",   "4", "--lr", "0.05",
                                        "--momentum", "0.9", "--weight-decay", "5e-4", "--dropout", "0"};
  auto multi = common;
  multi.insert(multi.end(), {"--split", "5,20,7", "--save-params", dir_.file("multi.pt")});
  const auto hosts = trainOnHosts(bed, multi);
  for (int h = 0; h < bed.hosts(); ++h) {
    ASSERT_FALSE(hosts[h].timedOut) << "host " << h << " hung:\n" << hosts[h].output;
    ASSERT_EQ(hosts[h].exitCode, 0) << "host " << h << ":\n" << hosts[h].output;
  }
  expectOneProcessParameters(common, dir_.file("multi.pt"), 4, "3 hosts (split 5,20,7)");  // common's --steps
  // The job really spanned three hosts: rank 0's summary counts them and their split.
  const auto summary = nlohmann::json::parse(readFile(runDir(0) + "/summary.json"));
  EXPECT_EQ(summary["nodes"], 3);
  EXPECT_EQ(summary["split"], "5,20,7");
}

// No route to the master and a loopback hostname: one line naming --iface at once, not a rendezvous timeout.
TEST_F(MultiHostExactness, AHostWithNoRouteToTheMasterAndALoopbackNameIsToldToGiveIface) {
  Testbed bed({"none"});
  const auto r =
      runProcess(bed.asHost(0, trainCommand(dataDir_, runDir(0),
                                            {"--nnodes", "2", "--node-rank", "1", "--master-addr", "198.51.100.7",
                                             "--master-port", "29500", "--job-token-file", jobTokenFile()})));
  ASSERT_FALSE(r.timedOut) << r.output;
  expectOneLineError(r, "give --iface", 2);
  EXPECT_LT(r.seconds, 10) << r.output;
}

}  // namespace
}  // namespace balancenet::testing

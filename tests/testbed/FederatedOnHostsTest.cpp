// Federated training for real across hosts: `federate serve` on host 0 and one `federate join` on each of hosts
// 1..3, each under its own CPU quota (0.5, 0.25 and 0.2 core) and with a data directory of its own, given the job
// token in a file, and no --iface: Gloo's addresses come from the route toward the server (join) and the server's
// first interface (serve on 0.0.0.0). The third client joins after round 1. Every round completes, every client
// trains in the last round, partition.csv names each with its own sample count, and balanced gives the client
// under a fifth of a core a smaller local batch than the one under half a core.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include "CsvRows.h"
#include "TestbedFixture.h"
#include "testing/SyntheticData.h"

namespace balancenet::testing {
namespace {

// Enough rounds for the late client to start on a fifth of a core (loading libtorch there takes seconds) and
// take part in the last rounds.
constexpr int kRounds = 20;

class FederatedOnHosts : public TestbedFixture {
 protected:
  std::vector<std::string> joinOn(const Testbed& bed, int host, int64_t samples) {
    const std::string data = dir_.file("data-c" + std::to_string(host));
    std::filesystem::create_directories(data);
    writeSyntheticMnistDir(data, samples, 16);
    return bed.asHost(host, {BALANCENET_BINARY, "federate", "join", "--server",
                             bed.address(0) + ":" + std::to_string(kTestbedStorePort), "--data-dir", data,
                             "--name=c" + std::to_string(host), "--job-token-file", jobTokenFile()});
  }
};

// rounds.csv's rows: round -> client -> (samples, status).
std::map<int, std::map<int, std::pair<int64_t, std::string>>> roundRows(const std::string& path) {
  std::map<int, std::map<int, std::pair<int64_t, std::string>>> out;
  for (const auto& row : readCsvRows(path))
    out[std::stoi(row.at("round"))][std::stoi(row.at("client"))] = {std::stoll(row.at("samples")), row.at("status")};
  return out;
}

TEST_F(FederatedOnHosts, ClientsOnCappedHostsWithTheirOwnDataJoinAndTrainEveryRound) {
  Testbed bed({"none", "0.5", "0.25", "0.2"});
  ProcessOptions o;
  o.timeoutSeconds = 150;
  std::string serverOutput;
  o.onOutput = [&serverOutput](const std::string& out, double) { serverOutput = out; };
  const auto serverArgv = bed.asHost(0, {BALANCENET_BINARY,
                                         "federate",
                                         "serve",
                                         "--port",
                                         std::to_string(kTestbedStorePort),
                                         "--job-token-file",
                                         jobTokenFile(),
                                         "--data-dir",
                                         dataDir_,
                                         "--run-dir",
                                         runDir(0),
                                         "--model",
                                         "mlp",
                                         "--rounds",
                                         std::to_string(kRounds),
                                         "--min-clients",
                                         "2",
                                         "--strategy",
                                         "balanced",
                                         "--deadline-s",
                                         "1",
                                         "--local-batch",
                                         "16",
                                         "--local-steps",
                                         "200",
                                         "--eval-every",
                                         "0",
                                         "--threads",
                                         "1",
                                         "--join-timeout",
                                         "60",
                                         "--progress-seconds",
                                         "0.001"});
  auto server = std::async(std::launch::async, [&] { return runProcess(serverArgv, o); });
  ProcessOptions c;
  c.timeoutSeconds = 150;
  auto c1 = std::async(std::launch::async, [&] { return runProcess(joinOn(bed, 1, 320), c); });
  auto c2 = std::async(std::launch::async, [&] { return runProcess(joinOn(bed, 2, 256), c); });
  // The third arrives late: after round 1 it waits for the next boundary.
  const auto start = std::chrono::steady_clock::now();
  while (serverOutput.find("round 1/") == std::string::npos &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(90))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto c3 = std::async(std::launch::async, [&] { return runProcess(joinOn(bed, 3, 192), c); });
  const ProcessResult s = server.get();
  ASSERT_EQ(s.exitCode, 0) << s.output;
  for (auto* f : {&c1, &c2, &c3}) {
    const ProcessResult r = f->get();
    EXPECT_EQ(r.exitCode, 0) << r.output;
  }
  const auto rounds = roundRows(runDir(0) + "/rounds.csv");
  ASSERT_EQ(rounds.size(), static_cast<size_t>(kRounds)) << readFile(runDir(0) + "/rounds.csv");
  const auto& last = rounds.rbegin()->second;
  ASSERT_EQ(last.size(), 3u) << "every client has a row in the last round";
  for (const auto& [client, row] : last) EXPECT_EQ(row.second, "ok") << "client " << client;
  // Ids in enrolment order: c1 and c2 first (either order), c3 last.
  const std::string partition = readFile(runDir(0) + "/partition.csv");
  EXPECT_NE(partition.find("\n2,c3,"), std::string::npos) << partition;
  std::map<std::string, int> idOf;
  for (const auto& row : readCsvRows(runDir(0) + "/partition.csv")) idOf[row.at("name")] = std::stoi(row.at("client"));
  // Each client's own data (its sample and label counts, held-out share included), never the server's.
  EXPECT_NE(partition.find("c1,320,"), std::string::npos) << partition;
  EXPECT_NE(partition.find("c2,256,"), std::string::npos) << partition;
  EXPECT_NE(partition.find("c3,192,"), std::string::npos) << partition;
  // balanced: samples per round in proportion to the measured speeds (200 local steps make the 1 s deadline bind
  // before the step cap, even for the mlp); a fifth of a core trains fewer than half a core.
  EXPECT_LT(last.at(idOf.at("c3")).first, last.at(idOf.at("c1")).first) << readFile(runDir(0) + "/rounds.csv");
}

}  // namespace
}  // namespace balancenet::testing

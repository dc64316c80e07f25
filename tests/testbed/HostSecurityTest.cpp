// Security between hosts: a 4-host job given its token in a file (--job-token-file, TestbedFixture) trains, while a
// fifth host that is not part of it tries to join with no token, with another token and with another world size.
// Each is refused with the documented one line (docs/reliability.md, "Security of the rendezvous"): without a
// token before it reaches the store at all, since the store is beyond loopback. The job goes on undisturbed.
#include <gtest/gtest.h>

#include <thread>

#include "TestbedFixture.h"

namespace balancenet::testing {
namespace {

constexpr int kJobHosts = 4;  // hosts 0-3; host 4 is the stranger
constexpr int kJobSteps = 40;
constexpr int kJobGlobalBatch = 32;

struct Stranger {
  const char* name;
  const char* token;  // nullptr: none
  int nnodes;
  int nodeRank;
  std::string expected;  // the fragment of its one error line
};

class HostSecurity : public TestbedFixture {
 protected:
  // A launcher on `host` that believes it is node `nodeRank` of a job of `nnodes` hosts at host 0.
  ProcessResult tryToJoin(const Testbed& bed, int host, const Stranger& s) {
    ProcessOptions o;
    if (s.token) o.env["BALANCENET_JOB_TOKEN"] = s.token;
    o.timeoutSeconds = 60;
    const std::vector<std::string> flags{"--model",
                                         "mlp",
                                         "--global-batch",
                                         std::to_string(kJobGlobalBatch),
                                         "--steps",
                                         "3",
                                         "--nnodes",
                                         std::to_string(s.nnodes),
                                         "--node-rank",
                                         std::to_string(s.nodeRank),
                                         "--nproc-per-node",
                                         "1",
                                         "--master-addr",
                                         bed.address(0),
                                         "--master-port",
                                         std::to_string(kTestbedStorePort),
                                         "--iface",
                                         "eth0",
                                         "--rendezvous-timeout",
                                         "20"};
    return runProcess(bed.asHost(host, trainCommand(dataDir_, dir_.file(std::string("stranger-") + s.name), flags)), o);
  }
};

TEST_F(HostSecurity, StrangersOnAFifthHostAreRefusedWithOneLineAndTheJobGoesOn) {
  Testbed bed({"none", "none", "none", "none", "none"});
  const std::string job = bed.address(0) + ":" + std::to_string(kTestbedStorePort);
  const std::vector<Stranger> strangers{
      {"no-token", nullptr, kJobHosts, 1,
       "the job's store at " + job + " is reachable from other hosts and this process has no job token"},
      {"wrong-token", "not-the-job-token-0a9b8c", kJobHosts, 1, "job token does not match the job at " + job},
      // A launcher checks the job's --nnodes at the hosts' meeting; one of another job goes alone.
      {"wrong-world-size", kTestbedJobToken, kJobHosts + 1, kJobHosts,
       "host 0 was started with --nnodes 4 but host 4 with --nnodes 5: give every host the same --nnodes"},
  };
  std::vector<ProcessResult> refused(strangers.size());
  std::vector<std::thread> tries;
  // Paced steps (8 samples at 40 samples/s: at least 200 ms each, 8 s in all) outlast the strangers,
  // who start with the job and wait for its store like any host.
  const std::vector<std::string> flags{"--model",
                                       "mlp",
                                       "--global-batch",
                                       std::to_string(kJobGlobalBatch),
                                       "--steps",
                                       std::to_string(kJobSteps),
                                       "--node-speed",
                                       "40,40,40,40",
                                       "--progress-seconds",
                                       "0"};
  std::vector<double> jobEnd(kJobHosts, 0);
  const auto start = std::chrono::steady_clock::now();
  const auto hosts = trainOnHosts(
      bed, flags, {},
      [&](int host, pid_t, double) {
        if (host == 0 && tries.empty())
          for (size_t i = 0; i < strangers.size(); ++i)
            tries.emplace_back([&, i] { refused[i] = tryToJoin(bed, kJobHosts, strangers[i]); });
      },
      kJobHosts);
  const double jobSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& t : tries) t.join();
  ASSERT_EQ(tries.size(), strangers.size());

  for (size_t i = 0; i < strangers.size(); ++i) {
    SCOPED_TRACE(strangers[i].name);
    expectOneLineError(refused[i], strangers[i].expected, 2);
    std::printf("%s: refused after %.1f s (the job took %.1f s)\n", strangers[i].name, refused[i].seconds, jobSeconds);
  }
  for (int h = 0; h < kJobHosts; ++h) {
    ASSERT_FALSE(hosts[h].timedOut) << "host " << h << " hung:\n" << hosts[h].output;
    EXPECT_EQ(hosts[h].exitCode, 0) << "host " << h << ":\n" << hosts[h].output;
    EXPECT_EQ(hosts[h].output.find("error"), std::string::npos) << "host " << h << ":\n" << hosts[h].output;
  }
  expectEveryStepTrained(kJobSteps, kJobGlobalBatch, kJobHosts);
}

}  // namespace
}  // namespace balancenet::testing

// scripts/testbed.sh itself: what it makes is what it says, it enforces the quota, and nothing is left behind
// after `down`, a failed `up` or an interrupted one.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "TestbedFixture.h"

namespace balancenet::testing {
namespace {

using TestbedScript = TestbedFixture;

ProcessOptions timeLimit(double seconds) {
  ProcessOptions o;
  o.timeoutSeconds = seconds;
  return o;
}

std::vector<std::string> scriptArgs(const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), {"--name", name, "--subnet", "10.215.3"});
  return args;
}

TEST_F(TestbedScript, HostsHaveTheirAddressesQuotasAndLinksAndDownRemovesEverything) {
  std::string name;
  {
    Testbed bed({"0.3", "none"}, {40, 0});
    name = bed.name();
    const auto status = bed.control({"status"});
    EXPECT_NE(status.find("host 0 " + bed.address(0) + " cpu 0.3 rate-mbit 40 link up"), std::string::npos) << status;
    EXPECT_NE(status.find("host 1 " + bed.address(1) + " cpu none rate-mbit 0 link up"), std::string::npos) << status;
    // Host 1 reaches host 0 by its address; after `cut 0` it cannot, after `heal 0` it can again.
    const auto reach = [&] {
      return runProcess(bed.asHost(1, {"/bin/bash", "-c", "exec 3<>/dev/tcp/" + bed.address(0) + "/9; exit 0"}),
                        timeLimit(5))
          .output;
    };
    EXPECT_NE(reach().find("refused"), std::string::npos) << "host 0 answered with a refusal before the cut";
    bed.control({"cut", "0"});
    EXPECT_NE(bed.control({"status"}).find("link cut"), std::string::npos);
    EXPECT_EQ(reach().find("refused"), std::string::npos) << "host 0 still answered after the cut";
    bed.control({"heal", "0"});
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_NE(reach().find("refused"), std::string::npos) << "host 0 did not answer after heal";
    // The quota binds: a busy loop on host 0 (0.3 cores) is throttled for most of a second.
    const auto before = std::stod(bed.control({"throttled", "0"}));
    runProcess(bed.asHost(0, {"/usr/bin/timeout", "1", "sh", "-c", "while :; do :; done"}), timeLimit(10));
    const auto throttledMs = std::stod(bed.control({"throttled", "0"})) - before;
    EXPECT_GT(throttledMs, 300) << "a busy loop under a 0.3-core quota was throttled only " << throttledMs << " ms";
  }
  EXPECT_EQ(runTestbedScript({"--name", name, "leftovers"}).output, "\n");
}

TEST_F(TestbedScript, AFailedUpLeavesNothingBehind) {
  const std::string name = "f" + std::to_string(getpid() % 1000000);
  ProcessOptions o;
  o.env = {{"BALANCENET_TESTBED_FAIL_AT", "host2"}};
  const auto r = runTestbedScript(scriptArgs(name, {"up", "4", "--cpu", "0.5,0.5,0.5,0.5"}), o);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("up failed; removing what it made"), std::string::npos) << r.output;
  EXPECT_EQ(runTestbedScript(scriptArgs(name, {"leftovers"})).output, "\n");
}

TEST_F(TestbedScript, AnInterruptedUpLeavesNothingBehindWhereverItStopped) {
  const std::string name = "i" + std::to_string(getpid() % 1000000);
  // Interrupted at the first host, in the middle and at the last (the script waits there for the signal):
  // whatever it had made is removed.
  for (const std::string at : {"host0", "host2", "host5"}) {
    ProcessOptions o;
    o.env = {{"BALANCENET_TESTBED_PAUSE_AT", at}};
    o.timeoutSeconds = 20;
    bool paused = false;
    o.onOutput = [&](const std::string& out, double) { paused = out.find("pausing at " + at) != std::string::npos; };
    bool sent = false;
    o.whileRunning = [&](pid_t pid, double) {
      if (paused && !sent) sent = kill(pid, SIGTERM) == 0;
    };
    const auto r = runTestbedScript(
        scriptArgs(name, {"up", "6", "--cpu", "0.5,0.5,0.5,0.5,0.5,0.5", "--rate-mbit", "10,10,10,10,10,10"}), o);
    EXPECT_TRUE(sent) << r.output;
    EXPECT_FALSE(r.timedOut) << r.output;
    EXPECT_NE(r.output.find("up failed; removing what it made"), std::string::npos) << r.output;
    EXPECT_EQ(runTestbedScript(scriptArgs(name, {"leftovers"})).output, "\n") << "interrupted at " << at << ":\n"
                                                                              << r.output;
  }
}

}  // namespace
}  // namespace balancenet::testing

// Faults between hosts: one host of a 4-host job loses its link (testbed `cut`) or its worker is
// SIGKILLed while the job trains. With --elastic the other hosts name the lost rank within about
// --peer-timeout and finish every step; without it every launcher exits non-zero with one line naming the
// rank and its host. Either way no process of the job is left on any host.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "TestbedFixture.h"

namespace balancenet::testing {
namespace {

constexpr int kHosts = 4;
constexpr int kVictim = 2;  // the host (and rank: one worker per host) the fault hits
constexpr int kSteps = 40;
constexpr int kGlobalBatch = 32;
constexpr double kPeerTimeout = 3;

enum class Fault { CutLink, KillWorker };

struct Timed {
  std::vector<ProcessResult> hosts;
  double faultAt = -1;  // seconds from the start of the job
  double noticedAt = -1;  // when the first of `noticed` appeared in a host's output
  double namedAt = -1;    // when `named` did
  std::string leftRunning;  // processes found in the hosts' namespaces after the job
};

class HostFaults : public TestbedFixture {
 protected:
  // Runs a 4-host job of `flags` (paced: at least 200 ms a step), applies `fault` to host kVictim once
  // rank 0 reports progress, and times when the lines `noticed` and `named` first appear. A cut link is
  // healed once the other hosts have finished, so that the victim finds the job gone instead of waiting.
  Timed runWithFault(const Testbed& bed, Fault fault, std::vector<std::string> flags, const std::string& noticed,
                     const std::string& named) {
    flags.insert(flags.end(), {"--model", "mlp", "--global-batch", std::to_string(kGlobalBatch), "--steps",
                               std::to_string(kSteps), "--node-speed", "40,40,40,40", "--progress-seconds", "0.5",
                               "--rendezvous-timeout", "15"});
    Timed t;
    std::mutex mutex;
    std::atomic<bool> training{false};
    std::atomic<pid_t> launchers[kHosts] = {};
    bool healed = false;
    const auto start = std::chrono::steady_clock::now();
    auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    ProcessOptions o;
    o.timeoutSeconds = 60;
    o.onOutput = [&](const std::string& output, double) {
      std::lock_guard<std::mutex> lock(mutex);
      if (output.find("[rank 0] [info] step ") != std::string::npos) training = true;
      if (t.faultAt < 0) return;
      if (t.noticedAt < 0 && output.find(noticed) != std::string::npos) t.noticedAt = now();
      if (t.namedAt < 0 && output.find(named) != std::string::npos) t.namedAt = now();
    };
    t.hosts = trainOnHosts(bed, flags, o, [&](int host, pid_t launcher, double) {
      launchers[host] = launcher;
      if (host != kVictim || !training) return;
      std::lock_guard<std::mutex> lock(mutex);
      if (t.faultAt < 0) {
        if (fault == Fault::CutLink) bed.control({"cut", std::to_string(kVictim)});
        if (fault == Fault::KillWorker)
          for (pid_t worker : childrenOf(launcher)) ::kill(worker, SIGKILL);
        t.faultAt = now();
      }
      bool othersDone = true;
      for (int h = 0; h < kHosts; ++h)
        if (h != kVictim) othersDone = othersDone && launchers[h] != 0 && !processAlive(launchers[h]);
      if (fault == Fault::CutLink && othersDone && !healed) {
        bed.control({"heal", std::to_string(kVictim)});
        healed = true;
      }
    });
    for (int h = 0; h < kHosts; ++h)
      for (pid_t pid : bed.processes(h)) t.leftRunning += " host " + std::to_string(h) + ": " + std::to_string(pid);
    std::printf("fault at %.1f s; '%s' after %.1f s; '%s' after %.1f s\n", t.faultAt, noticed.c_str(),
                t.noticedAt - t.faultAt, named.c_str(), t.namedAt - t.faultAt);
    if (std::getenv("BNTB_VERBOSE"))
      for (int h = 0; h < kHosts; ++h) std::printf("=== host %d (exit %d, %.1f s):\n%s\n", h, t.hosts[h].exitCode, t.hosts[h].seconds, t.hosts[h].output.c_str());
    return t;
  }
};

std::string faultName(const ::testing::TestParamInfo<Fault>& info) {
  return info.param == Fault::CutLink ? "CutLink" : "KilledWorker";
}

class ElasticHostFault : public HostFaults, public ::testing::WithParamInterface<Fault> {};

TEST_P(ElasticHostFault, TheOtherHostsNameTheLostRankAndTrainEveryStep) {
  Testbed bed({"none", "none", "none", "none"});
  const auto t = runWithFault(bed, GetParam(), {"--elastic", "--peer-timeout", "3"}, "re-forming the group",
                              "lost rank(s) 2");
  ASSERT_GE(t.faultAt, 0) << "the job never reported progress:\n" << t.hosts[0].output;
  for (int h = 0; h < kHosts; ++h) {
    ASSERT_FALSE(t.hosts[h].timedOut) << "host " << h << " hung:\n" << t.hosts[h].output;
    if (h != kVictim) {
      EXPECT_EQ(t.hosts[h].exitCode, 0) << "host " << h << ":\n" << t.hosts[h].output;
    }
  }
  // Rank 0 (on host 0) announces the new group, naming the rank it lost.
  EXPECT_NE(t.hosts[0].output.find("3 workers (rank(s) 0,1,3)"), std::string::npos) << t.hosts[0].output;
  ASSERT_GE(t.namedAt, 0) << t.hosts[0].output;
  // A silent peer is dropped after --peer-timeout; a killed one at once, once its heartbeat (2 s) has aged.
  EXPECT_LT(t.namedAt - t.faultAt, kPeerTimeout + 5) << t.hosts[0].output;
  expectEveryStepTrained(kSteps, kGlobalBatch, kHosts - 1);
  // The victim's launcher lost its only worker: it says so, not that the job has too few workers (it has 3).
  expectOneLineError(t.hosts[kVictim], "no worker of this host remains; the job goes on without it", 1);
  // Cut off, its worker found the store gone while it tried to re-form: the line says so.
  if (GetParam() == Fault::CutLink) {
    EXPECT_NE(t.hosts[kVictim].output.find("the job's store stopped answering while the group re-formed"),
              std::string::npos)
        << t.hosts[kVictim].output;
  }
  EXPECT_EQ(t.leftRunning, "");
}

INSTANTIATE_TEST_SUITE_P(Faults, ElasticHostFault, ::testing::Values(Fault::CutLink, Fault::KillWorker), faultName);

class StoppingHostFault : public HostFaults, public ::testing::WithParamInterface<Fault> {};

TEST_P(StoppingHostFault, EveryLauncherStopsWithOneLineNamingTheRankAndItsHost) {
  Testbed bed({"none", "none", "none", "none"});
  const std::string lost = "rank 2 at " + bed.address(kVictim);
  const auto t = runWithFault(bed, GetParam(), {"--stall-timeout", "5"}, "balancenet: error: ", lost);
  ASSERT_GE(t.faultAt, 0) << "the job never reported progress:\n" << t.hosts[0].output;
  for (int h = 0; h < kHosts; ++h) {
    SCOPED_TRACE("host " + std::to_string(h));
    if (h != kVictim) {
      expectOneLineError(t.hosts[h], lost + " has not contributed for", 1);
    }
  }
  ASSERT_FALSE(t.hosts[kVictim].timedOut) << t.hosts[kVictim].output;
  EXPECT_NE(t.hosts[kVictim].exitCode, 0) << t.hosts[kVictim].output;
  if (GetParam() == Fault::KillWorker)
    expectOneLineError(t.hosts[kVictim], "worker rank 2 (pid", 1);
  EXPECT_EQ(t.leftRunning, "");
}

INSTANTIATE_TEST_SUITE_P(Faults, StoppingHostFault, ::testing::Values(Fault::CutLink, Fault::KillWorker), faultName);

}  // namespace
}  // namespace balancenet::testing

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

constexpr int kHosts = 4;  // one worker each: host h runs rank h
constexpr int kSteps = 40;
constexpr int kGlobalBatch = 32;
constexpr double kPeerTimeout = 3;

enum class Fault { CutLink, KillWorker };

struct HostFault {
  Fault fault;
  int victim;  // the host (and rank) it hits
};

std::string caseName(const ::testing::TestParamInfo<HostFault>& info) {
  return std::string(info.param.fault == Fault::CutLink ? "CutLinkOfHost" : "KilledWorkerOnHost") +
         std::to_string(info.param.victim);
}

struct Timed {
  std::vector<ProcessResult> hosts;
  double faultAt = -1;      // seconds from the start of the job
  double noticedAt = -1;    // when the first of `noticed` appeared in a host's output
  double namedAt = -1;      // when `named` did
  std::string leftRunning;  // processes found in the hosts' namespaces after the job
};

class HostFaults : public TestbedFixture, public ::testing::WithParamInterface<HostFault> {
 protected:
  // Runs a 4-host job of `flags` (paced: at least 200 ms a step), applies the fault to its victim once
  // rank 0 reports progress, and times when the lines `noticed` and `named` first appear. A cut link is
  // healed once the other hosts have finished, so that the victim finds the job gone instead of waiting.
  Timed runWithFault(const Testbed& bed, std::vector<std::string> flags, const std::string& noticed,
                     const std::string& named) {
    // Not a structured binding: the lambdas below capture these (C++17 lets g++ do that, not clang).
    const auto fault = GetParam().fault;
    const auto victim = GetParam().victim;
    flags.insert(flags.end(),
                 {"--model", "mlp", "--global-batch", std::to_string(kGlobalBatch), "--steps", std::to_string(kSteps),
                  "--node-speed", "40,40,40,40", "--progress-seconds", "0.5", "--rendezvous-timeout", "15"});
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
      if (host != victim || !training) return;
      std::lock_guard<std::mutex> lock(mutex);
      if (t.faultAt < 0) {
        if (fault == Fault::CutLink) bed.control({"cut", std::to_string(victim)});
        if (fault == Fault::KillWorker)
          for (pid_t worker : childrenOf(launcher)) ::kill(worker, SIGKILL);
        t.faultAt = now();
      }
      bool othersDone = true;
      for (int h = 0; h < kHosts; ++h)
        if (h != victim) othersDone = othersDone && launchers[h] != 0 && !processAlive(launchers[h]);
      if (fault == Fault::CutLink && othersDone && !healed) {
        bed.control({"heal", std::to_string(victim)});
        healed = true;
      }
    });
    for (int h = 0; h < kHosts; ++h)
      for (pid_t pid : bed.processes(h)) t.leftRunning += " host " + std::to_string(h) + ": " + std::to_string(pid);
    std::printf("fault at %.1f s; '%s' %.1f s later; '%s' %.1f s later\n", t.faultAt, noticed.c_str(),
                t.noticedAt - t.faultAt, named.c_str(), t.namedAt - t.faultAt);
    return t;
  }
};

using ElasticHostFault = HostFaults;

TEST_P(ElasticHostFault, TheOtherHostsNameTheLostRankAndTrainEveryStep) {
  const int victim = GetParam().victim;
  Testbed bed({"none", "none", "none", "none"});
  const auto t = runWithFault(bed, {"--elastic", "--peer-timeout", "3"}, "re-forming the group",
                              "lost rank(s) " + std::to_string(victim));
  ASSERT_GE(t.faultAt, 0) << "the job never reported progress:\n" << t.hosts[0].output;
  std::string survivors;
  for (int h = 0; h < kHosts; ++h) {
    ASSERT_FALSE(t.hosts[h].timedOut) << "host " << h << " hung:\n" << t.hosts[h].output;
    if (h != victim) {
      EXPECT_EQ(t.hosts[h].exitCode, 0) << "host " << h << ":\n" << t.hosts[h].output;
      survivors += (survivors.empty() ? "" : ",") + std::to_string(h);
    }
  }
  // The new rank 0 (host 0's worker, or host 1's when host 0 lost its own) announces the new group.
  const int rank0Host = victim == 0 ? 1 : 0;
  EXPECT_NE(t.hosts[rank0Host].output.find("3 workers (rank(s) " + survivors + ")"), std::string::npos)
      << t.hosts[rank0Host].output;
  ASSERT_GE(t.namedAt, 0) << t.hosts[rank0Host].output;
  // A silent peer is dropped after --peer-timeout; a killed one at once, once its heartbeat (2 s) has aged.
  EXPECT_LT(t.namedAt - t.faultAt, kPeerTimeout + 5) << t.hosts[rank0Host].output;
  expectEveryStepTrained(kSteps, kGlobalBatch, kHosts - 1, rank0Host);
  if (victim == 0) {
    // Host 0's launcher serves the job's store: it outlives its own worker until the others are done.
    EXPECT_EQ(t.hosts[0].exitCode, 0) << t.hosts[0].output;
    EXPECT_NE(t.hosts[0].output.find("no worker of this host remains; it serves the job's store until"),
              std::string::npos)
        << t.hosts[0].output;
  } else {
    // The victim's launcher lost its only worker: it says so, not that the job has too few workers (it has 3).
    expectOneLineError(t.hosts[victim], "no worker of this host remains; the job goes on without it", 1);
  }
  // Cut off, its worker found the store gone while it tried to re-form: the line says so.
  if (GetParam().fault == Fault::CutLink) {
    EXPECT_NE(t.hosts[victim].output.find("the job's store stopped answering while the group re-formed"),
              std::string::npos)
        << t.hosts[victim].output;
  }
  EXPECT_EQ(t.leftRunning, "");
}

INSTANTIATE_TEST_SUITE_P(Faults, ElasticHostFault,
                         ::testing::Values(HostFault{Fault::CutLink, 2}, HostFault{Fault::KillWorker, 2},
                                           HostFault{Fault::KillWorker, 0}),
                         caseName);

using StoppingHostFault = HostFaults;

TEST_P(StoppingHostFault, EveryLauncherStopsWithOneLineNamingTheRankAndItsHost) {
  const int victim = GetParam().victim;
  Testbed bed({"none", "none", "none", "none"});
  const std::string lost = "rank " + std::to_string(victim) + " at " + bed.address(victim);
  const auto t = runWithFault(bed, {"--stall-timeout", "5"}, "balancenet: error: ", lost);
  ASSERT_GE(t.faultAt, 0) << "the job never reported progress:\n" << t.hosts[0].output;
  for (int h = 0; h < kHosts; ++h) {
    SCOPED_TRACE("host " + std::to_string(h));
    if (h != victim) {
      expectOneLineError(t.hosts[h], lost + " has not contributed for", 1);
    }
  }
  ASSERT_FALSE(t.hosts[victim].timedOut) << t.hosts[victim].output;
  EXPECT_NE(t.hosts[victim].exitCode, 0) << t.hosts[victim].output;
  if (GetParam().fault == Fault::KillWorker)
    expectOneLineError(t.hosts[victim], "worker rank " + std::to_string(victim) + " (pid", 1);
  EXPECT_EQ(t.leftRunning, "");
}

INSTANTIATE_TEST_SUITE_P(Faults, StoppingHostFault,
                         ::testing::Values(HostFault{Fault::CutLink, 2}, HostFault{Fault::KillWorker, 2}), caseName);

}  // namespace
}  // namespace balancenet::testing

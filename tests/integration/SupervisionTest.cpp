// The launcher supervises real worker processes: a dead worker or Ctrl-C stops the job cleanly,
// names the cause, and leaves no orphan behind.
#include <gtest/gtest.h>

#include <signal.h>

#include <set>
#include <utility>

#include <fmt/format.h>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class Supervision : public BinaryFixture {
 protected:
  // A job long enough to be interrupted; `act` runs once every worker is up and training.
  ProcessResult longJob(const std::function<void(pid_t launcher, const std::vector<pid_t>& workers)>& act,
                        std::set<pid_t>& seenWorkers) {
    ProcessOptions o;
    o.timeoutSeconds = 120;
    bool acted = false;
    o.whileRunning = [&](pid_t launcher, double elapsed) {
      auto workers = childrenOf(launcher);
      seenWorkers.insert(workers.begin(), workers.end());
      if (!acted && workers.size() == 3 && elapsed > 2.5) {
        acted = true;
        act(launcher, workers);
      }
    };
    return train(
        {"--nodes", "3", "--model", "mlp", "--global-batch", "30", "--steps", "100000", "--progress-seconds", "0"}, o);
  }
};

TEST_F(Supervision, KilledWorkerStopsTheJobAndIsNamed) {
  std::set<pid_t> workers;
  pid_t victim = -1;
  auto r = longJob(
      [&](pid_t, const std::vector<pid_t>& ws) {
        victim = ws[1];
        ::kill(victim, SIGKILL);
      },
      workers);
  ASSERT_NE(victim, -1) << "workers never came up:\n" << r.output;
  expectOneLineError(r, fmt::format("(pid {}) was killed by signal 9", victim), 1);
  EXPECT_LT(r.seconds, 60);
  for (pid_t w : workers) EXPECT_FALSE(processAlive(w)) << "orphan worker " << w;
}

// Ctrl-C (SIGINT) exits 130; a batch system or `timeout` stops a job with SIGTERM: 128 + 15, as shells
// and torchrun report it (130 would say Ctrl-C). Either way no worker is left behind.
class StopSignal : public Supervision, public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(StopSignal, StopsEveryWorkerWithExitCode128PlusTheSignal) {
  const auto [stopSignal, code] = GetParam();
  std::set<pid_t> workers;
  auto r = longJob(
      [stopSignal = stopSignal](pid_t launcher, const std::vector<pid_t>&) { ::kill(launcher, stopSignal); }, workers);
  EXPECT_EQ(r.exitCode, code) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
  EXPECT_EQ(workers.size(), 3u);
  for (pid_t w : workers) EXPECT_FALSE(processAlive(w)) << "orphan worker " << w;
}

INSTANTIATE_TEST_SUITE_P(Supervision, StopSignal,
                         ::testing::Values(std::make_pair(SIGINT, 130), std::make_pair(SIGTERM, 143)),
                         [](const auto& info) { return info.param.first == SIGINT ? "Interrupt" : "Terminate"; });

}  // namespace
}  // namespace balancenet::testing

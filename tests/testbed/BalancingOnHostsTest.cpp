// Balancing what the kernel enforces: hosts whose speed is a CPU quota (no --slowdown, no --node-speed),
// one `balancenet train` per host, the split read back from host 0's steps.csv.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "TestbedFixture.h"
#include "balancenet/core/Median.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::testing {
namespace {

using BalancingOnHosts = TestbedFixture;

// One step of steps.csv: every rank's batch and compute time, in rank order.
struct StepRow {
  std::vector<double> batch, computeMs;
  double share(int rank) const {
    double total = 0;
    for (double b : batch) total += b;
    return total > 0 ? batch[rank] / total : 0;
  }
  // Rank `rank`'s compute time per sample over the median of the others': ~1 at equal speed, ~k when
  // it is k times slower. Relative, so that load on the whole machine cancels out.
  double relativeSlowness(int rank) const {
    std::vector<double> others;
    for (size_t r = 0; r < batch.size(); ++r)
      if (static_cast<int>(r) != rank && batch[r] > 0) others.push_back(computeMs[r] / batch[r]);
    return others.empty() || batch[rank] <= 0 ? 0 : computeMs[rank] / batch[rank] / median(others);
  }
};

// steps.csv of a run, one row per step in step order.
std::vector<StepRow> readSteps(const std::string& stepsCsv, int ranks) {
  const auto rows = report::readCsv(stepsCsv);
  const int step = report::column(rows[0], "step", stepsCsv), rank = report::column(rows[0], "rank", stepsCsv),
            batch = report::column(rows[0], "batch", stepsCsv),
            compute = report::column(rows[0], "compute_ms", stepsCsv);
  std::vector<StepRow> steps;
  for (size_t i = 1; i < rows.size(); ++i) {
    const size_t s = std::stoul(rows[i][step]);
    const size_t r = std::stoul(rows[i][rank]);
    if (s >= steps.size()) steps.resize(s + 1, StepRow{std::vector<double>(ranks), std::vector<double>(ranks)});
    steps[s].batch.at(r) = std::stod(rows[i][batch]);
    steps[s].computeMs.at(r) = std::stod(rows[i][compute]);
  }
  return steps;
}

double medianShare(const std::vector<StepRow>& steps, int rank, size_t from, size_t to) {
  std::vector<double> shares;
  for (size_t s = from; s < to && s < steps.size(); ++s) shares.push_back(steps[s].share(rank));
  return shares.empty() ? 0 : median(shares);
}

void expectAllHostsSucceeded(const Testbed& bed, const std::vector<ProcessResult>& hosts) {
  for (int h = 0; h < bed.hosts(); ++h) {
    ASSERT_FALSE(hosts[h].timedOut) << "host " << h << " hung:\n" << hosts[h].output;
    ASSERT_EQ(hosts[h].exitCode, 0) << "host " << h << ":\n" << hosts[h].output;
  }
}

// Compute must dominate a step for quotas to show in it, and last many 10 ms quota periods: a narrow CNN
// (many FLOPs per parameter, so little to all-reduce) on a large batch, one thread per host. With an MLP the
// compute of a step took 2-10 ms of 40-100: the quotas hardly showed.
const std::vector<std::string> kComputeHeavy{"--model", "cnn", "--width", "0.25", "--global-batch", "768",
                                             "--policy", "balanced", "--dropout", "0"};

TEST_F(BalancingOnHosts, SlowHostGetsItsQuotaShare) {
  const std::vector<double> quota{0.45, 0.45, 0.45, 0.11};
  Testbed bed({"0.45", "0.45", "0.45", "0.11"});
  auto flags = kComputeHeavy;
  flags.insert(flags.end(), {"--steps", "50"});
  const auto hosts = trainOnHosts(bed, flags);
  expectAllHostsSucceeded(bed, hosts);
  if (HasFatalFailure()) return;

  const auto steps = readSteps(runDir(0) + "/steps.csv", bed.hosts());
  ASSERT_EQ(steps.size(), 50u);
  const double expected = quota[3] / (quota[0] + quota[1] + quota[2] + quota[3]);
  const size_t warmUp = 15;  // the first decisions (every 5 steps) learn the hosts' speeds
  const double share = medianShare(steps, 3, warmUp, steps.size());
  std::printf("slow host (quota %.2f of %.2f cores): median share %.3f of the batch after step %zu, quota-proportional "
              "%.3f (%.0f%%)\n",
              quota[3], quota[0] + quota[1] + quota[2] + quota[3], share, warmUp, expected,
              100 * (share / expected - 1));
  EXPECT_NEAR(share, expected, 0.3 * expected);
}

// The first step from `from` on where rank 3's slowness is on `slowSide` of 2 (slowed ~4x vs ~1x) for three
// steps running: where a quota change took effect. steps.size() if none.
size_t firstSustained(const std::vector<StepRow>& steps, size_t from, bool slowSide) {
  for (size_t s = from; s + 3 <= steps.size(); ++s) {
    bool all = true;
    for (size_t k = s; k < s + 3; ++k) all = all && ((steps[k].relativeSlowness(3) > 2) == slowSide);
    if (all) return s;
  }
  return steps.size();
}

// Steps from `from` until rank 3's share has moved to `target` from the other side: down to within 30% above
// it (or below), or up to within 30% under it (or above). The policy may overshoot a little when it
// refits a model after a large change; the settled share is checked separately. `to - from` if never.
size_t stepsToFollow(const std::vector<StepRow>& steps, size_t from, size_t to, double target, bool down) {
  for (size_t s = from; s < to; ++s)
    if (down ? steps[s].share(3) <= 1.3 * target : steps[s].share(3) >= 0.7 * target) return s - from;
  return to - from;
}

TEST_F(BalancingOnHosts, FollowsAHostSlowedAndRestoredWhileTheJobRuns) {
  // Four equal hosts; host 3 drops to a quarter of its quota mid-run, then gets it back. Not much less
  // than 0.1 core: below that the work a process does beside its compute (the monitor's probes, Gloo's
  // threads) takes a visible part of the quota, and the host is slower than its quota says (at 0.075
  // cores its compute per sample was 5-6x, not 4x, the others').
  const double full = 0.4, slowed = full / 4;
  Testbed bed({"0.4", "0.4", "0.4", "0.4"});
  // Seconds after training started (splits.csv written: its first row is the initial split), such that
  // each phase has 30 or more steps (~0.2 s each) even on a busy machine.
  constexpr double kSlowAt = 5, kRestoreAt = 15;
  double trainingStarted = -1;
  int changes = 0;
  std::string controlError;
  auto quotaChanges = [&](int host, pid_t, double seconds) {
    if (host != 0 || !controlError.empty()) return;
    if (trainingStarted < 0) {
      if (std::filesystem::exists(runDir(0) + "/splits.csv")) trainingStarted = seconds;
      return;
    }
    try {
      if (changes == 0 && seconds >= trainingStarted + kSlowAt) {
        bed.control({"set-cpu", "3", std::to_string(slowed)});
        ++changes;
      } else if (changes == 1 && seconds >= trainingStarted + kRestoreAt) {
        bed.control({"set-cpu", "3", std::to_string(full)});
        ++changes;
      }
    } catch (const std::exception& e) {
      controlError = e.what();
    }
  };
  auto flags = kComputeHeavy;
  flags.insert(flags.end(), {"--steps", "150"});
  const auto hosts = trainOnHosts(bed, flags, {}, quotaChanges);
  ASSERT_EQ(controlError, "");
  ASSERT_EQ(changes, 2) << "the run ended before both quota changes";
  expectAllHostsSucceeded(bed, hosts);
  if (HasFatalFailure()) return;

  const auto steps = readSteps(runDir(0) + "/steps.csv", bed.hosts());
  std::string slowness;
  for (size_t s = 0; s < steps.size(); ++s)
    slowness += fmt::format(" {}:{:.1f}/{:.3f}", s, steps[s].relativeSlowness(3), steps[s].share(3));
  const size_t slowedAt = firstSustained(steps, 1, true);
  const size_t restoredAt = firstSustained(steps, slowedAt, false);
  ASSERT_LT(restoredAt, steps.size()) << "rank 3's compute per sample / the others' (step:slowness/share):"
                                      << slowness;
  const double slowTarget = slowed / (3 * full + slowed), fullTarget = 0.25;
  const size_t toSlow = stepsToFollow(steps, slowedAt, restoredAt, slowTarget, true);
  const size_t toFull = stepsToFollow(steps, restoredAt, steps.size(), fullTarget, false);
  const double slowShare = medianShare(steps, 3, slowedAt + toSlow, restoredAt);
  const double fullShare = medianShare(steps, 3, restoredAt + toFull, steps.size());
  std::printf("host 3 slowed to %.3f cores at step %zu: share followed to %.3f in %zu steps (then median %.3f); "
              "restored at step %zu: followed to %.3f in %zu steps (then median %.3f)\n",
              slowed, slowedAt, slowTarget, toSlow, slowShare, restoredAt, fullTarget, toFull, fullShare);
  EXPECT_LE(toSlow, 20u) << slowness;
  EXPECT_LE(toFull, 20u) << slowness;
  // Settled: the median of the rest of each phase is within 30% of the quota-proportional share.
  EXPECT_NEAR(slowShare, slowTarget, 0.3 * slowTarget) << slowness;
  EXPECT_NEAR(fullShare, fullTarget, 0.3 * fullTarget) << slowness;
}

}  // namespace
}  // namespace balancenet::testing

// Balancing what the kernel enforces: hosts whose speed is a CPU quota (no --slowdown, no --node-speed),
// one `balancenet train` per host, the split read back from host 0's steps.csv.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// `rank`'s compute time over the median of the others', median over steps [from, to): ~1 when balanced.
double computeRatio(const std::vector<StepRow>& steps, int rank, size_t from, size_t to) {
  std::vector<double> ratios;
  for (size_t s = from; s < to && s < steps.size(); ++s) {
    std::vector<double> others;
    for (size_t r = 0; r < steps[s].computeMs.size(); ++r)
      if (static_cast<int>(r) != rank) others.push_back(steps[s].computeMs[r]);
    if (!others.empty() && median(others) > 0) ratios.push_back(steps[s].computeMs[rank] / median(others));
  }
  return ratios.empty() ? 0 : median(ratios);
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
// compute of a step took 2-10 ms of 40-100: the quotas hardly showed. 192 samples per host at an equal split.
std::vector<std::string> computeHeavy(int hosts, int steps) {
  return {"--model",  "cnn",      "--width",   "0.25", "--global-batch", std::to_string(192 * hosts),
          "--policy", "balanced", "--dropout", "0",    "--steps",        std::to_string(steps)};
}

TEST_F(BalancingOnHosts, SlowHostGetsItsQuotaShare) {
  const std::vector<double> quota{0.45, 0.45, 0.45, 0.11};
  Testbed bed({"0.45", "0.45", "0.45", "0.11"});
  const auto hosts = trainOnHosts(bed, computeHeavy(bed.hosts(), 50));
  expectAllHostsSucceeded(bed, hosts);
  if (HasFatalFailure()) return;

  const auto steps = readSteps(runDir(0) + "/steps.csv", bed.hosts());
  ASSERT_EQ(steps.size(), 50u);
  const double expected = quota[3] / (quota[0] + quota[1] + quota[2] + quota[3]);
  const size_t warmUp = 15;  // the first decisions (every 5 steps) learn the hosts' speeds
  const double share = medianShare(steps, 3, warmUp, steps.size());
  const double ratio = computeRatio(steps, 3, warmUp, steps.size());
  std::printf(
      "slow host (quota %.2f of %.2f cores): median share %.3f of the batch after step %zu, quota-proportional "
      "%.3f (%.0f%%); its compute time %.2fx the others'\n",
      quota[3], quota[0] + quota[1] + quota[2] + quota[3], share, warmUp, expected, 100 * (share / expected - 1),
      ratio);
  // What the policy promises: equal compute times. The share lands under the quota's: at 0.11 core the work
  // beside the compute (the monitor's probes, Gloo's threads) takes a visible part of the quota (on torch 2.11:
  // 21% under here, 31% under on CI's machine; FollowsAHostSlowedAndRestoredWhileTheJobRuns saw 6-39%), far
  // from the equal split's 0.25.
  EXPECT_GT(ratio, 0.6);
  EXPECT_LT(ratio, 1.6);
  EXPECT_GT(share, 0.5 * expected);
  EXPECT_LT(share, 1.3 * expected);
}

// The first step from `from` on where `rank`'s slowness is on `slowSide` of 2 (slowed ~4x vs ~1x) for three
// steps running: where a quota change took effect. steps.size() if none.
size_t firstSustained(const std::vector<StepRow>& steps, int rank, size_t from, bool slowSide) {
  for (size_t s = from; s + 3 <= steps.size(); ++s) {
    bool all = true;
    for (size_t k = s; k < s + 3; ++k) all = all && ((steps[k].relativeSlowness(rank) > 2) == slowSide);
    if (all) return s;
  }
  return steps.size();
}

// Steps from `from` until `rank`'s share has moved to `target` from the other side: down to within 30% above
// it (or below), or up to within 30% under it (or above). The policy may overshoot a little when it
// refits a model after a large change; the settled share is checked separately. `to - from` if never.
size_t stepsToFollow(const std::vector<StepRow>& steps, int rank, size_t from, size_t to, double target, bool down) {
  for (size_t s = from; s < to; ++s)
    if (down ? steps[s].share(rank) <= 1.3 * target : steps[s].share(rank) >= 0.7 * target) return s - from;
  return to - from;
}

// Quota changes at training steps: rank 0 prints its step every 0.1 s (--progress-seconds 0.1); each change is made
// when the step it names has passed, in order.
class QuotaSchedule {
 public:
  struct Change {
    int step, host;
    double cores;
  };
  QuotaSchedule(const Testbed& bed, std::vector<Change> changes) : bed_(bed), changes_(std::move(changes)) {}

  ProcessOptions options() {
    ProcessOptions options;
    options.onOutput = [this](const std::string& out, double) {
      const auto tail = out.substr(out.size() > 400 ? out.size() - 400 : 0);
      int step = -1;
      for (auto it = std::sregex_iterator(tail.begin(), tail.end(), progress_); it != std::sregex_iterator(); ++it)
        step = std::stoi((*it)[1]);
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        while (error_.empty() && applied_ < static_cast<int>(changes_.size()) && step >= changes_[applied_].step) {
          const Change& c = changes_[applied_];
          bed_.control({"set-cpu", std::to_string(c.host), std::to_string(c.cores)});
          ++applied_;
        }
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    };
    return options;
  }
  int applied() {
    std::lock_guard<std::mutex> lock(mutex_);
    return applied_;
  }
  std::string error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }

 private:
  const Testbed& bed_;
  std::vector<Change> changes_;
  std::mutex mutex_;
  int applied_ = 0;
  std::string error_;
  const std::regex progress_{R"(step (\d+)/)"};
};

TEST_F(BalancingOnHosts, FollowsAHostSlowedAndRestoredWhileTheJobRuns) {
  // Three equal hosts; host 2 drops to a quarter of its quota mid-run, then gets it back. Not much less
  // than 0.1 core: below that the work a process does beside its compute (the monitor's probes, Gloo's
  // threads) takes a visible part of the quota, and the host is slower than its quota says (at 0.075
  // cores its compute per sample was 5-6x, not 4x, the others'). Three hosts, not four: the balanced
  // policy keeps a split unless the better one is predicted to gain more than 3 standard errors of the
  // step times, which reached 20-47% on this shared machine; getting its CPU back, the host gains the
  // job 25% here (one of four: 19%, often taken for noise for 30+ steps).
  const double full = 0.4, slowed = full / 4;
  constexpr int kSlow = 2;
  Testbed bed({"0.4", "0.4", "0.4"});
  // At training steps, not seconds: how long a phase lasts in seconds depends on how fast the machine is,
  // its length in steps must not (a time-based version once got a 14-step phase on a busy machine).
  constexpr int kSlowAt = 50, kRestoreAt = 100;
  QuotaSchedule schedule(bed, {{kSlowAt, kSlow, slowed}, {kRestoreAt, kSlow, full}});
  auto flags = computeHeavy(bed.hosts(), 180);
  flags.insert(flags.end(), {"--progress-seconds", "0.1"});
  const auto hosts = trainOnHosts(bed, flags, schedule.options());
  ASSERT_EQ(schedule.error(), "");
  ASSERT_EQ(schedule.applied(), 2) << "the run ended before both quota changes";
  expectAllHostsSucceeded(bed, hosts);
  if (HasFatalFailure()) return;

  const auto steps = readSteps(runDir(0) + "/steps.csv", bed.hosts());
  std::string slowness;
  for (size_t s = 0; s < steps.size(); ++s)
    slowness += fmt::format(" {}:{:.1f}/{:.3f}", s, steps[s].relativeSlowness(kSlow), steps[s].share(kSlow));
  const size_t slowedAt = firstSustained(steps, kSlow, 1, true);
  const size_t restoredAt = firstSustained(steps, kSlow, slowedAt, false);
  ASSERT_LT(restoredAt, steps.size()) << "the slowed rank's compute per sample / the others' (step:slowness/share):"
                                      << slowness;
  // Long enough phases to tell whether the split followed within 20 steps.
  ASSERT_GE(restoredAt - slowedAt, 25u) << slowness;
  ASSERT_GE(steps.size() - restoredAt, 25u) << slowness;
  const double slowTarget = slowed / ((bed.hosts() - 1) * full + slowed), fullTarget = 1.0 / bed.hosts();
  const size_t toSlow = stepsToFollow(steps, kSlow, slowedAt, restoredAt, slowTarget, true);
  const size_t toFull = stepsToFollow(steps, kSlow, restoredAt, steps.size(), fullTarget, false);
  const double slowShare = medianShare(steps, kSlow, slowedAt + toSlow, restoredAt);
  const double fullShare = medianShare(steps, kSlow, restoredAt + toFull, steps.size());
  const double slowRatio = computeRatio(steps, kSlow, slowedAt + toSlow, restoredAt);
  const double fullRatio = computeRatio(steps, kSlow, restoredAt + toFull, steps.size());
  std::printf(
      "host %d slowed to %.3f cores at step %zu: share followed to %.3f in %zu steps (then median share %.3f, "
      "compute time %.2fx the others'); restored at step %zu: followed to %.3f in %zu steps (then median share "
      "%.3f, compute time %.2fx)\n",
      kSlow, slowed, slowedAt, slowTarget, toSlow, slowShare, slowRatio, restoredAt, fullTarget, toFull, fullShare,
      fullRatio);
  EXPECT_LE(toSlow, 20u) << slowness;
  EXPECT_LE(toFull, 20u) << slowness;
  // Settled, by what the policy promises: equal compute times for the rest of each phase. (Not the quota's
  // share: at 0.1 core a host is up to ~5x, not 4x, slower, as the work beside its compute takes a part of
  // the quota; the slowed share settled 6-39% under the quota-proportional one.)
  EXPECT_GT(slowRatio, 0.6) << slowness;
  EXPECT_LT(slowRatio, 1.6) << slowness;
  EXPECT_GT(fullRatio, 0.6) << slowness;
  EXPECT_LT(fullRatio, 1.6) << slowness;
  EXPECT_NEAR(fullShare, fullTarget, 0.3 * fullTarget) << slowness;
}

// Issue 55: a host too slow to pay for its hand-over (0.05 core beside three at 0.45: its optimizer step and the sum's
// unpacking alone outlast the others' step) is left out of the exchange, a share of 0, while it times a one-sample
// probe; given its CPU back mid-run it is taken back in. Throughout, the job trains the whole global batch of each
// step: its parameters are one process's on the same batches, within the float bound.
TEST_F(BalancingOnHosts, AHostTooSlowForItsHandOverIsLeftOutThenTakenBackAndTheGradientStaysTheWholeBatchs) {
  Testbed bed({"0.45", "0.45", "0.45", "0.05"});
  // 60 steps after the restore: the policy takes it back once the gain beats 3 standard errors of the step times,
  // 20 steps after the restore here, longer on a busy machine.
  constexpr int kSteps = 100, kRestoreAt = 40, kSlow = 3;
  const std::vector<std::string> common{"--model", "cnn",  "--global-batch", "128", "--steps",   std::to_string(kSteps),
                                        "--lr",    "0.05", "--momentum",     "0.9", "--dropout", "0"};
  QuotaSchedule schedule(bed, {{kRestoreAt, kSlow, 0.45}});
  auto multi = common;
  multi.insert(multi.end(), {"--progress-seconds", "0.1", "--save-params", dir_.file("multi.pt")});
  const auto hosts = trainOnHosts(bed, multi, schedule.options());
  ASSERT_EQ(schedule.error(), "");
  ASSERT_EQ(schedule.applied(), 1) << "the run ended before the quota came back";
  expectAllHostsSucceeded(bed, hosts);
  if (HasFatalFailure()) return;

  // Left out, said so, and back in: summary.json's spans, rank 0's log lines.
  const auto summary = nlohmann::json::parse(readFile(runDir(0) + "/summary.json"));
  const auto& spans = summary["left_out"];
  ASSERT_TRUE(spans.is_array()) << summary.dump(2);
  int64_t outFrom = -1, outTo = -1;
  for (const auto& span : spans)
    if (span["rank"] == kSlow && outFrom < 0) outFrom = span["from_step"], outTo = span["to_step"];
  const auto steps = readSteps(runDir(0) + "/steps.csv", bed.hosts());
  std::string shares;
  for (size_t st = 0; st < steps.size(); ++st) shares += fmt::format(" {}:{}", st, steps[st].batch[kSlow]);
  std::printf("host %d (0.05 core until step %d): left out for steps [%lld, %lld); its shares:%s\n", kSlow, kRestoreAt,
              static_cast<long long>(outFrom), static_cast<long long>(outTo), shares.c_str());
  // The policy's notes on the slow host's rows of splits.csv: why it went out and came back.
  std::string notes;
  for (const auto& row : report::readCsv(runDir(0) + "/splits.csv"))
    if (row.size() > 10 && row[2] == std::to_string(kSlow)) notes += "\n  " + row[0] + ": " + row[3] + " " + row[10];
  std::printf("its decisions:%s\n", notes.c_str());
  ASSERT_GE(outFrom, 0) << "never left out:" << shares;
  EXPECT_LT(outFrom, kRestoreAt) << shares;
  EXPECT_LT(outTo, kSteps) << "not taken back in:" << shares;
  EXPECT_GE(outTo, kRestoreAt) << "taken back in before its quota came back:" << shares;
  EXPECT_GE(steps.back().share(kSlow), 0.1) << shares;  // back with a share near its speed's (0.25)
  const std::string log = hosts[0].output;
  EXPECT_NE(log.find("rank 3 leaves the exchange"), std::string::npos) << log;
  EXPECT_NE(log.find("rank 3 is back in the exchange"), std::string::npos) << log;

  expectOneProcessParameters(common, dir_.file("multi.pt"), kSteps, "left out and back in");
}

}  // namespace
}  // namespace balancenet::testing

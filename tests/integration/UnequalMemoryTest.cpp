// Workers of unequal memory end to end, real processes. --accumulate auto: a worker whose --memory-limit-mb does not
// hold its share in one pass takes it in micro-steps that fit, trains exactly as without the cap, and keeps the share
// its speed earns, where a fixed --accumulate holds the policy to what its passes hold. --shard-state: the optimiser
// state in slices sized by the caps trains as the replicated state does. --recompute: a worker that rebuilds its
// blocks' activations in backward trains as one that keeps them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "BinaryFixture.h"
#include "CsvRows.h"
#include "balancenet/core/Median.h"

namespace balancenet::testing {
namespace {

class UnequalMemory : public BinaryFixture {
 protected:
  // cnn's state is about 14 MiB and a sample's activations about 1 MiB: 22 MiB holds a pass of a few samples.
  const std::vector<std::string> job_{"--nodes",        "2",  "--model",        "cnn", "--dropout", "0",
                                      "--global-batch", "64", "--eval-samples", "0"};
  std::vector<std::string> with(std::vector<std::string> more) const {
    more.insert(more.begin(), job_.begin(), job_.end());
    return more;
  }
  ProcessResult trainInto(const std::string& runDir, const std::vector<std::string>& flags) {
    return runProcess(trainCommand(dataDir_, dir_.file(runDir), flags));
  }
};

// steps.csv's column `name` of rank `rank`, by step.
std::map<long long, double> columnOf(const std::string& stepsCsv, const std::string& name, int rank) {
  std::map<long long, double> byStep;
  for (const auto& row : readCsvRows(stepsCsv))
    if (std::stoi(row.at("rank")) == rank) byStep[std::stoll(row.at("step"))] = std::stod(row.at(name));
  return byStep;
}

// Rank `rank`'s share at each decision of splits.csv.
std::vector<int64_t> sharesOf(const std::string& splitsCsv, int rank) {
  std::vector<int64_t> shares;
  for (const auto& row : readCsvRows(splitsCsv))
    if (std::stoi(row.at("rank")) == rank) shares.push_back(std::stoll(row.at("batch")));
  return shares;
}

// The capped worker takes its 48 samples in passes of a few (micro_batches > 1, the other worker 1), and every
// step's loss is the uncapped run's: the gradient summed over the passes is the share's.
TEST_F(UnequalMemory, ACappedWorkersPassesTrainAsOnePass) {
  const std::vector<std::string> fixed{"--split", "16,48", "--steps", "6"};
  auto uncapped = with(fixed);
  ASSERT_EQ(trainInto("uncapped", uncapped).exitCode, 0);
  auto capped = with(fixed);
  capped.insert(capped.end(), {"--memory-limit-mb", "0,22", "--accumulate", "auto"});
  const auto r = trainInto("capped", capped);
  ASSERT_EQ(r.exitCode, 0) << r.output;

  const auto passes1 = columnOf(dir_.file("capped/steps.csv"), "micro_batches", 1);
  const auto passes0 = columnOf(dir_.file("capped/steps.csv"), "micro_batches", 0);
  ASSERT_EQ(passes1.size(), 6u);
  for (const auto& [step, k] : passes1) EXPECT_GT(k, 1) << "step " << step;
  for (const auto& [step, k] : passes0) EXPECT_EQ(k, 1) << "step " << step;
  const auto want = stepLosses(dir_.file("uncapped/steps.csv"));
  const auto got = stepLosses(dir_.file("capped/steps.csv"));
  ASSERT_EQ(got.size(), want.size());
  // float32 sums in another order: a few ulps of the loss, far below what one wrong step moves it by.
  for (size_t s = 0; s < want.size(); ++s) EXPECT_NEAR(got[s], want[s], 1e-5 * std::abs(want[s]) + 1e-6) << s;
  EXPECT_GT(std::abs(want.back() - want.front()), 1e-3) << "training moved the loss";
}

// A fixed --accumulate 1 holds the capped worker to what one pass holds, whatever its speed earns; under auto the
// same worker starts with 54 and keeps more than a pass holds. Its peer's receives go up
// before its passes, so the small worker's hand-over is not counted as its own work (it was: its send waited for
// the peer's 8 passes, own_ms came to twice that, and the policy moved every sample off it, to a split of 1,63).
TEST_F(UnequalMemory, AutoKeepsTheShareItsSpeedEarnsWhereOnePassCapsIt) {
  const auto capped = trainInto(
      "one-pass", with({"--split", "57,7", "--policy", "balanced", "--steps", "30", "--memory-limit-mb", "0,22"}));
  ASSERT_EQ(capped.exitCode, 0) << capped.output;
  const auto held = sharesOf(dir_.file("one-pass/splits.csv"), 1);
  ASSERT_GE(held.size(), 4u);
  for (int64_t share : held) EXPECT_LE(share, 7) << "the one-pass cap was crossed";

  const auto r = trainInto("auto", with({"--split", "10,54", "--policy", "balanced", "--steps", "30",
                                         "--memory-limit-mb", "0,22", "--accumulate", "auto"}));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto shares = sharesOf(dir_.file("auto/splits.csv"), 0);
  ASSERT_GE(shares.size(), 4u);
  // Where the split goes within 30 steps depends on the machine's load (CI's kept 10,54 once); what cannot happen is
  // the defect's flight of every sample off the uncapped worker, or the capped one held to its one-pass cap (7).
  EXPECT_GE(*std::min_element(shares.begin(), shares.end()), 10) << "the uncapped worker lost its share";
  EXPECT_LE(shares.back(), 57) << "the capped worker was held to what one pass holds";
  const auto steps = dir_.file("auto/steps.csv");
  const auto own = columnOf(steps, "own_ms", 0), peerCompute = columnOf(steps, "compute_ms", 1);
  std::vector<double> ownEarly, computeEarly;
  for (long long s = 1; s <= 4; ++s) {  // the initial split, before the first decision
    ownEarly.push_back(own.at(s));
    computeEarly.push_back(peerCompute.at(s));
  }
  EXPECT_LT(median(ownEarly), 0.25 * median(computeEarly)) << "the hand-over's wait counted as own work";
}

// Adam's state in slices by memory (worker 1's cap leaves it about a third of worker 0's room): every step's loss is
// the replicated run's, and the log names the slices.
TEST_F(UnequalMemory, ShardedStateInSlicesByMemoryTrainsAsReplicated) {
  const std::vector<std::string> fixed{"--split", "20,44", "--steps", "6", "--optimizer", "adam", "--lr", "0.001"};
  ASSERT_EQ(trainInto("replicated", with(fixed)).exitCode, 0);
  auto sharded = with(fixed);
  sharded.insert(sharded.end(), {"--shard-state", "--memory-limit-mb", "300,110"});
  const auto r = trainInto("sharded", sharded);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("--shard-state: the optimiser state of"), std::string::npos) << r.output;
  const auto want = stepLosses(dir_.file("replicated/steps.csv"));
  const auto got = stepLosses(dir_.file("sharded/steps.csv"));
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < want.size(); ++s) EXPECT_NEAR(got[s], want[s], 1e-5 * std::abs(want[s]) + 1e-6) << s;
  EXPECT_GT(std::abs(want.back() - want.front()), 1e-3) << "training moved the loss";
}

// Losses of two runs step by step: float32 sums in another order at most, far below what one wrong step moves.
void expectSameLosses(const std::string& gotCsv, const std::string& wantCsv) {
  const auto want = stepLosses(wantCsv);
  const auto got = stepLosses(gotCsv);
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < want.size(); ++s) EXPECT_NEAR(got[s], want[s], 1e-5 * std::abs(want[s]) + 1e-6) << s;
  EXPECT_GT(std::abs(want.back() - want.front()), 1e-3) << "training moved the loss";
}

// A sharded run's checkpoint holds the state a replicated optimiser would (every worker's slice gathered): resumed
// with the same slices, with other slices (the caps swapped) or replicated, steps 4-7 give the uninterrupted sharded
// run's losses.
TEST_F(UnequalMemory, ShardedStateResumesFromItsCheckpointWithAnySlicing) {
  const std::vector<std::string> fixed{"--split", "20,44", "--optimizer", "adam", "--lr", "0.001"};
  auto run = [&](const std::string& name, std::vector<std::string> more) {
    auto flags = with(fixed);
    flags.insert(flags.end(), more.begin(), more.end());
    const auto r = trainInto(name, flags);
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return r;
  };
  const std::vector<std::string> sharded{"--shard-state", "--memory-limit-mb", "300,110"};
  auto straight = sharded;
  straight.insert(straight.end(), {"--steps", "8"});
  run("straight", straight);
  const auto want = stepLosses(dir_.file("straight/steps.csv"));
  ASSERT_EQ(want.size(), 8u);
  const std::vector<std::vector<std::string>> resumes{sharded, {"--shard-state", "--memory-limit-mb", "110,300"}, {}};
  for (size_t i = 0; i < resumes.size(); ++i) {
    const std::string ckpt = dir_.file("ckpt" + std::to_string(i));
    auto first = sharded;
    first.insert(first.end(), {"--steps", "4", "--checkpoint-dir", ckpt, "--checkpoint-every", "4"});
    run("first" + std::to_string(i), first);
    auto resumed = resumes[i];
    resumed.insert(resumed.end(), {"--steps", "8", "--checkpoint-dir", ckpt, "--resume"});
    const auto r = run("resumed" + std::to_string(i), resumed);
    EXPECT_NE(r.output.find("resumed from"), std::string::npos) << r.output;
    const auto got = stepLosses(dir_.file("resumed" + std::to_string(i) + "/steps.csv"));
    ASSERT_EQ(got.size(), 4u) << "resume " << i;
    for (size_t s = 0; s < got.size(); ++s)
      EXPECT_NEAR(got[s], want[4 + s], 1e-5 * std::abs(want[4 + s]) + 1e-6) << "resume " << i << ", step " << 4 + s;
  }
}

// resnet18 (BatchNorm) at a quarter width: worker 1's 40 MiB holds 17 of its 48 samples in one pass, all of them
// recomputed (about 0.5 of 1.9 MB a sample), so --recompute auto turns it on for worker 1 only, under --accumulate 1;
// every step's loss is the uncapped run's.
TEST_F(UnequalMemory, AWorkerThatRecomputesItsBlocksTrainsAsOneThatKeepsThem) {
  const std::vector<std::string> fixed{"--model", "resnet18", "--width", "0.25", "--split", "16,48", "--steps", "6"};
  ASSERT_EQ(trainInto("kept", with(fixed)).exitCode, 0);
  auto capped = with(fixed);
  capped.insert(capped.end(), {"--memory-limit-mb", "0,40", "--recompute", "auto"});
  const auto r = trainInto("recomputed", capped);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("worker 1 recomputes its blocks in backward (--recompute auto)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("worker 0 recomputes"), std::string::npos) << r.output;
  for (const auto& [step, k] : columnOf(dir_.file("recomputed/steps.csv"), "micro_batches", 1))
    EXPECT_EQ(k, 1) << "step " << step << ": recomputed, the 48 samples fit one pass";
  expectSameLosses(dir_.file("recomputed/steps.csv"), dir_.file("kept/steps.csv"));
  // Without --recompute the same cap is refused at the start, and the refusal says what would fit.
  auto refused = with(fixed);
  refused.insert(refused.end(), {"--memory-limit-mb", "0,40"});
  const auto no = trainInto("refused", refused);
  EXPECT_EQ(no.exitCode, 2) << no.output;
  EXPECT_NE(no.output.find("--recompute auto"), std::string::npos) << no.output;
}

// With dropout, the second forward must draw the first one's masks: --recompute blocks on every worker gives every
// step's loss of the run that keeps its activations.
TEST_F(UnequalMemory, RecomputedBlocksDrawTheirDropoutMasksAgain) {
  std::vector<std::string> fixed = with({"--split", "24,40", "--steps", "6"});
  const auto dropout = std::find(fixed.begin(), fixed.end(), "--dropout");
  ASSERT_NE(dropout, fixed.end());
  *(dropout + 1) = "0.3";
  ASSERT_EQ(trainInto("kept", fixed).exitCode, 0);
  fixed.insert(fixed.end(), {"--recompute", "blocks"});
  const auto r = trainInto("recomputed", fixed);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("worker 0 recomputes its blocks"), std::string::npos) << r.output;
  expectSameLosses(dir_.file("recomputed/steps.csv"), dir_.file("kept/steps.csv"));
}

}  // namespace
}  // namespace balancenet::testing

// --global-batch auto and B schedules with real processes: B changes during training, every change is exact
// (one process given the same B step by step learns the same parameters), and a checkpoint carries B on.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "CsvRows.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

class AdaptiveBatch : public BinaryFixture {
 protected:
  // B of each step (the sum over ranks) and rank 0's noise_scale cell, from a run's steps.csv.
  struct Steps {
    std::map<int64_t, int64_t> batch;
    std::map<int64_t, std::string> noise;
  };
  Steps readSteps(const std::string& runDir) {
    Steps s;
    for (const auto& row : readCsvRows(runDir + "/steps.csv")) {
      const int64_t step = std::stoll(row.at("step"));
      s.batch[step] += std::stoll(row.at("batch"));
      if (row.at("rank") == "0") s.noise[step] = row.count("noise_scale") ? row.at("noise_scale") : "";
    }
    return s;
  }
  // The B@STEP schedule that replays a run's B step by step.
  static std::string scheduleOf(const std::map<int64_t, int64_t>& batch) {
    std::string text;
    int64_t last = -1;
    for (const auto& [step, b] : batch) {
      if (b == last) continue;
      text += text.empty() ? std::to_string(b) : fmt::format(",{}@{}", b, step);
      last = b;
    }
    return text;
  }
};

const std::vector<std::string> kModel{"--model",    "mlp", "--width",           "0.25", "--lr",         "0.05",
                                      "--momentum", "0.9", "--rebalance-every", "4",    "--lr-scaling", "none"};

// MIN 4 is far below what amortises the all-reduce, so the planner grows B once the noise scale is known
// (10 steps): a run in which B never moves fails here rather than passing the replay trivially.
TEST_F(AdaptiveBatch, AutoMovesBAndOneProcessGivenTheSameBatchesLearnsTheSame) {
  auto flags = kModel;
  flags.insert(flags.end(), {"--nodes", "2", "--global-batch", "auto:4:128:4", "--steps", "24", "--save-params",
                             dir_.file("auto.pt")});
  const auto r = train(flags);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto steps = readSteps(dir_.file("run"));
  ASSERT_EQ(steps.batch.size(), 24u);
  EXPECT_EQ(steps.batch.at(0), 4);
  for (const auto& [step, b] : steps.batch) {
    EXPECT_GE(b, 4) << "step " << step;
    EXPECT_LE(b, 128) << "step " << step;
  }
  for (const auto& [step, cell] : steps.noise) EXPECT_FALSE(cell.empty()) << "noise scale missing at step " << step;
  const std::string schedule = scheduleOf(steps.batch);
  std::printf("auto:4:128:4 on 2 workers chose B: %s (noise scale at the end %s)\n", schedule.c_str(),
              steps.noise.rbegin()->second.c_str());
  EXPECT_NE(schedule.find('@'), std::string::npos) << "B never changed";
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary["final_global_batch"].get<double>(), static_cast<double>(steps.batch.rbegin()->second));
  EXPECT_GT(summary["gradient_noise_scale"].get<double>(), 0);

  auto single = kModel;
  single.insert(single.end(), {"--nodes", "1", "--global-batch", schedule, "--steps", "24", "--save-params",
                               dir_.file("one.pt"), "--run-dir", dir_.file("run1")});
  const auto r1 = train(single);
  ASSERT_EQ(r1.exitCode, 0) << r1.output;
  EXPECT_EQ(readSteps(dir_.file("run1")).batch, steps.batch);
  const auto one = loadSavedParameters(dir_.file("one.pt"));
  const double diff = maxAbsDifference(loadSavedParameters(dir_.file("auto.pt")), one);
  const double bound = exactnessBound(one, 24);
  std::printf("2 workers under auto vs 1 process on its schedule: max |param difference| = %.3g (float bound %.3g)\n",
              diff, bound);
  EXPECT_LT(diff, bound);
}

// A checkpoint keeps the B in force and the noise scale: the resumed run's first step trains the B the
// first run's last step did, and its first decision already knows the noise scale.
TEST_F(AdaptiveBatch, ResumeContinuesWithTheBInForce) {
  const std::string ckpt = dir_.file("ckpt");
  auto flags = kModel;
  flags.insert(flags.end(), {"--nodes", "2", "--global-batch", "auto:4:128:4", "--checkpoint-dir", ckpt,
                             "--checkpoint-every", "18"});
  auto first = flags;
  first.insert(first.end(), {"--steps", "18"});
  const auto r = train(first);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto before = readSteps(dir_.file("run"));
  auto resumed = flags;
  resumed.insert(resumed.end(), {"--steps", "22", "--resume", "--run-dir", dir_.file("resumed")});
  const auto r2 = runProcess(trainCommand(dataDir_, dir_.file("resumed"), resumed));
  ASSERT_EQ(r2.exitCode, 0) << r2.output;
  const auto after = readSteps(dir_.file("resumed"));
  ASSERT_EQ(after.batch.begin()->first, 18);
  // Step 18 is no decision step (every 4): it trains the B of step 17.
  EXPECT_EQ(after.batch.at(18), before.batch.at(17));
  EXPECT_NE(before.batch.at(17), 4) << "B never left MIN: nothing to carry";
  // Step 20 decides with the restored noise scale (a fresh one would have 2 of its 10 steps: unknown, -1).
  bool decided = false;
  for (const auto& row : readCsvRows(dir_.file("resumed/splits.csv")))
    if (row.at("step") == "20" && row.at("rank") == "0") {
      decided = true;
      EXPECT_EQ(row.at("note").find("noise scale -1"), std::string::npos) << row.at("note");
    }
  EXPECT_TRUE(decided) << readFile(dir_.file("resumed/splits.csv"));
  std::printf("B at step 17: %lld; resumed at step 18: %lld\n", static_cast<long long>(before.batch.at(17)),
              static_cast<long long>(after.batch.at(18)));
}

}  // namespace
}  // namespace balancenet::testing

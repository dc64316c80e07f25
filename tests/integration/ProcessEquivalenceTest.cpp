// Real processes over loopback: an unequal multi-process run ends with the parameters of one process
// on the same global batches, and writes the run directory.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "BinaryFixture.h"
#include "CsvRows.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

class ProcessEquivalence : public BinaryFixture {
 protected:
  struct Comparison {
    ProcessResult multi;                                             // its run dir is "run"
    double maxDifference = std::numeric_limits<double>::infinity();  // of the final parameters
    double bound = 0;  // what float summation order explains after the run's --steps (testing/FloatBound.h)
  };
  // Trains `common` + `multiFlags`, then `common` on one node (run dir "run1"), and compares what they learned.
  Comparison compareWithOneProcess(const std::vector<std::string>& common, const std::vector<std::string>& multiFlags) {
    auto multi = common;
    multi.insert(multi.end(), multiFlags.begin(), multiFlags.end());
    multi.insert(multi.end(), {"--save-params", dir_.file("multi.pt")});
    Comparison c{train(multi)};
    auto single = common;
    single.insert(single.end(),
                  {"--nodes", "1", "--save-params", dir_.file("single.pt"), "--run-dir", dir_.file("run1")});
    const auto r1 = train(single);
    EXPECT_EQ(r1.exitCode, 0) << r1.output;
    if (c.multi.exitCode == 0 && r1.exitCode == 0) {
      const auto one = loadSavedParameters(dir_.file("single.pt"));
      c.maxDifference = maxAbsDifference(loadSavedParameters(dir_.file("multi.pt")), one);
      const auto steps = std::find(common.begin(), common.end(), "--steps");
      EXPECT_NE(steps, common.end()) << "the comparison's bound needs its --steps";
      if (steps != common.end() && steps + 1 != common.end()) c.bound = exactnessBound(one, std::stoll(*(steps + 1)));
    }
    return c;
  }
};

TEST_F(ProcessEquivalence, ThreeUnequalWorkersMatchOneProcess) {
  const std::vector<std::string> common{"--model",        "cnn",   "--width",        "0.25", "--dropout",      "0",
                                        "--global-batch", "32",    "--steps",        "6",    "--lr",           "0.05",
                                        "--momentum",     "0.9",   "--weight-decay", "5e-4", "--warmup-steps", "2",
                                        "--lr-decay",     "cosine"};
  const auto c = compareWithOneProcess(common, {"--nodes", "3", "--split", "1,24,7"});
  const auto& r = c.multi;
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::printf("3 processes (split 1,24,7) vs 1 process: max |param difference| = %.3g (float bound %.3g)\n",
              c.maxDifference, c.bound);
  EXPECT_LT(c.maxDifference, c.bound);

  // steps.csv: a header and one row per step and rank; summary.json with the headline numbers.
  const auto csv = readFile(dir_.file("run/steps.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 6 * 3) << csv;
  EXPECT_NE(csv.find("\n5,0,1,"), std::string::npos) << csv;  // step 5, rank 0 with batch 1
  auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary["split"], "1,24,7");
  EXPECT_EQ(summary["steps"], 6);
  EXPECT_GT(summary["samples_per_second"].get<double>(), 0);
  EXPECT_GE(summary["final_accuracy"].get<double>(), 0);
  EXPECT_EQ(summary["weight_update_ms_per_100"].size(), 1u);
  // The global-batch loss does not depend on the split: equal within the float error of the run's 6 steps.
  auto summary1 = nlohmann::json::parse(readFile(dir_.file("run1/summary.json")));
  const double loss1 = summary1["final_loss"].get<double>();
  EXPECT_NEAR(summary["final_loss"].get<double>(), loss1, exactnessBound({at::scalar_tensor(loss1)}, 6));
  // Progress and rank prefixes reach the user.
  EXPECT_NE(r.output.find("[rank 0] [info] step 6/6"), std::string::npos) << r.output;
}

// Hybrid: the decision table is printed at start, the wide layers travel as sufficient factors (layers.csv
// says so) and the parameters are still those of one process.
TEST_F(ProcessEquivalence, HybridSufficientFactorsMatchOneProcessAndExplainTheirChoice) {
  const std::vector<std::string> common{"--model", "mlp", "--width", "0.25", "--global-batch", "32",
                                        "--steps", "3",   "--lr",    "0.05", "--momentum",     "0.9"};
  const auto c =
      compareWithOneProcess(common, {"--nodes", "3", "--split", "1,24,7", "--comm", "hybrid", "--explain-comm"});
  const auto& r = c.multi;
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("sfb B (worst)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("layers.1           64x784           1,24,7"), std::string::npos) << r.output;
  std::printf("3 processes, hybrid (split 1,24,7) vs 1 process: max |param difference| = %.3g (float bound %.3g)\n",
              c.maxDifference, c.bound);
  EXPECT_LT(c.maxDifference, c.bound);

  // Step 2, rank 1 (K = 24) sends its 24 rows of 64 + 784 floats to 2 peers and receives 1 + 7 rows.
  const auto layers = readFile(dir_.file("run/layers.csv"));
  EXPECT_NE(layers.find("\n2,1,layers.1,sfb,162816,27136\n"), std::string::npos) << layers;
  EXPECT_NE(layers.find(",layers.5,allreduce,"), std::string::npos) << layers;
}

// --precision fp16 in real processes: the weights of one fp16 process, within fp16's bound (testing/FloatBound.cpp:
// 8 fp16 eps of the largest movement from the start, which a run at a learning rate of 1e-30 gives); steps.csv says
// each step's loss scale and that none was skipped, summary.json the precision.
TEST_F(ProcessEquivalence, Fp16WorkersWithUnequalSharesMatchOneFp16Process) {
  const std::vector<std::string> common{"--model",     "mlp",  "--width",        "0.25", "--global-batch", "32",
                                        "--steps",     "4",    "--lr",           "0.05", "--momentum",     "0.9",
                                        "--precision", "fp16", "--eval-samples", "0"};
  const auto c = compareWithOneProcess(common, {"--nodes", "2", "--split", "24,8", "--comm", "allreduce"});
  ASSERT_EQ(c.multi.exitCode, 0) << c.multi.output;
  auto still = common;
  std::replace(still.begin(), still.end(), std::string("0.05"), std::string("1e-30"));
  still.insert(still.end(), {"--save-params", dir_.file("start.pt"), "--run-dir", dir_.file("run0")});
  const auto r0 = train(still);
  ASSERT_EQ(r0.exitCode, 0) << r0.output;
  const auto one = loadSavedParameters(dir_.file("single.pt"));
  const double bound = mixedPrecisionBound(one, loadSavedParameters(dir_.file("start.pt")), 0x1p-10);
  std::printf("2 processes, fp16 (split 24,8) vs 1 fp16 process: max |param difference| = %.3g (fp16 bound %.3g)\n",
              c.maxDifference, bound);
  EXPECT_LT(c.maxDifference, bound);
  const auto rows = readCsvRows(dir_.file("run/steps.csv"));
  ASSERT_EQ(rows.size(), 4u * 2);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("loss_scale"), "65536");
    EXPECT_EQ(row.at("skipped"), "0");
  }
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary["precision"], "fp16");
  EXPECT_EQ(summary["skipped_steps"], 0);
}

TEST_F(ProcessEquivalence, TorchScriptModelMatchesOneProcess) {
  // tests/fixtures/tiny_cnn.pt: examples/script_model.py (torch.jit.script of a conv + linear model).
  const std::string model = std::string(BALANCENET_SOURCE_DIR) + "/tests/fixtures/tiny_cnn.pt";
  const std::vector<std::string> common{"--model", model,  "--global-batch", "16",  "--steps", "4",
                                        "--lr",    "0.05", "--momentum",     "0.9", "--comm",  "hybrid"};
  const auto c = compareWithOneProcess(common, {"--nodes", "2", "--split", "3,13"});
  ASSERT_EQ(c.multi.exitCode, 0) << c.multi.output;
  std::printf(
      "2 processes, TorchScript model (split 3,13) vs 1 process: max |param difference| = %.3g (float bound "
      "%.3g)\n",
      c.maxDifference, c.bound);
  EXPECT_LT(c.maxDifference, c.bound);
  // The hybrid mode cannot see inside a script: everything is all-reduced, by name.
  const auto layers = readFile(dir_.file("run/layers.csv"));
  EXPECT_NE(layers.find(",fc,allreduce,"), std::string::npos) << layers;
  EXPECT_EQ(layers.find(",sfb,"), std::string::npos) << layers;
}

// Also where steps.csv's CPU-quota columns are checked: with --comm flat each rank waits on one ring all-reduce
// a step, 2(P-1) = 4 dependent phases at 3 ranks.
TEST_F(ProcessEquivalence, WorkersStartedByHandWithTorchrunEnvironment) {
  const int port = freePort();
  std::vector<ProcessResult> results(3);
  std::vector<std::thread> workers;
  for (int rank = 0; rank < 3; ++rank)
    workers.emplace_back([&, rank] {
      ProcessOptions o;
      o.env = {{"RANK", std::to_string(rank)},
               {"WORLD_SIZE", "3"},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", std::to_string(port)}};
      o.timeoutSeconds = 120;
      results[rank] =
          train({"--model", "mlp", "--global-batch", "16", "--split", "5,5,6", "--steps", "3", "--comm", "flat"}, o);
    });
  for (auto& w : workers) w.join();
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(results[rank].exitCode, 0) << results[rank].output;
  const auto rows = readCsvRows(dir_.file("run/steps.csv"));
  ASSERT_EQ(rows.size(), 3u * 3u);
  for (const auto& row : rows) {
    for (const char* column : {"throttled_periods", "throttled_ms", "sync_cpu_ms", "comm_phases"})
      ASSERT_TRUE(row.count(column)) << column << " missing from steps.csv";
    EXPECT_EQ(row.at("comm_phases"), "4") << "step " << row.at("step") << " rank " << row.at("rank");
    EXPECT_GT(std::stod(row.at("sync_cpu_ms")), 0) << "step " << row.at("step") << " rank " << row.at("rank");
    EXPECT_GE(std::stod(row.at("throttled_ms")), 0);
  }
}

}  // namespace
}  // namespace balancenet::testing

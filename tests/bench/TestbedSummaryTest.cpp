// bench/testbed_vs_ddp.sh's numbers: the limit (bench/testbed_limit.py) and the table's rates, ideal, limit,
// best mode and auto's ratio to it (bench/testbed_vs_ddp_summary.py), on runs written by hand.
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "testing/ProcessRunner.h"
#include "testing/TempDir.h"

namespace {

const std::string kBench = std::string(BALANCENET_SOURCE_DIR) + "/bench";

// A balancenet run folder: rank 0's step times (ms) with BATCH samples a step on two ranks.
void writeRun(const std::string& dir, std::initializer_list<double> stepMs, int batch) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/summary.json") << R"({"evaluations": []})";
  std::ofstream steps(dir + "/steps.csv");
  steps << "step,rank,batch,update_ms\n";
  int step = 0;
  for (double ms : stepMs) {
    steps << step << ",0," << batch - batch / 4 << "," << ms << "\n";
    steps << step++ << ",1," << batch / 4 << "," << ms << "\n";
  }
}

// Two hosts alone at 200 and 100 samples/s; one all-reduce costs each 50 CPU-ms, 0.1 s at 0.5 cores and 0.2 s
// at 0.25: T = (100 + 200 * 0.1 + 100 * 0.2) / 300 s, so the limit is 100 / T = 214.3 samples/s.
TEST(TestbedSummary, LimitBestModeAndAutosRatioOverTheSteadySteps) {
  balancenet::testing::TempDir dir;
  const std::string out = dir.path();
  std::ofstream(out + "/scenarios.txt") << "T9 100 0.5,0.25 - - - - cnn 2\n";
  writeRun(out + "/alone/q0.5-b100", {1000, 500, 500}, 100);
  writeRun(out + "/alone/q0.25-b100", {1000, 1000, 1000}, 100);
  std::filesystem::create_directories(out + "/T9");
  std::ofstream(out + "/T9/allreduce-cpu.json") << R"({"parameters": 1, "iterations": 1, "cpu_seconds": [0.05, 0.05]})";
  writeRun(out + "/T9/bn-flat", {9999, 9999, 500, 500, 500}, 100);                 // 200 samples/s from step 2
  writeRun(out + "/T9/bn-flat.host1", {1, 1, 1, 1, 1}, 100);                       // another host's folder: no row
  writeRun(out + "/T9/bn-allreduce", {9999, 9999, 625, 625, 625}, 100);            // 160
  writeRun(out + "/T9/bn-auto", {9999, 2000, 526.3158, 526.3158, 526.3158}, 100);  // 190 (its trials left out)
  std::ofstream(out + "/T9/ddp.json") << R"({"global_batch": 100, "step_seconds": [9, 9, 1, 1, 1], "evaluations": []})";

  const auto result =
      balancenet::testing::runProcess({BALANCENET_PYTHON_EXE, kBench + "/testbed_vs_ddp_summary.py", out, "1"});
  const std::string& table = result.output;
  ASSERT_EQ(result.exitCode, 0) << table;
  EXPECT_NE(table.find("| T9 | 0.5/0.25 cores | 100 | balancenet, --comm flat (best mode) | 200.0 | 300.0 | 214.3 "
                       "| 0.67 | 0.93 | 2.00 |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| balancenet, --comm allreduce | 160.0 | 300.0 | 214.3 | 0.53 | 0.75 | 1.60 |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| balancenet, --comm auto (0.95 of the best mode) | 190.0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| PyTorch DDP | 100.0 | 300.0 | 214.3 | 0.33 | 0.47 | 1.00 |"), std::string::npos) << table;
  EXPECT_EQ(table.find("host1"), std::string::npos) << table;
  // The modes in their order, DDP last; auto over all its steps but the first: 400 samples in 3.58 s.
  EXPECT_LT(table.find("--comm allreduce"), table.find("--comm flat")) << table;
  EXPECT_LT(table.find("--comm auto"), table.find("PyTorch DDP")) << table;
  EXPECT_NE(table.find("T9: steps 2 on of 5; one all-reduce of cnn costs the hosts 50.0/50.0 CPU-ms; best single "
                       "mode: balancenet, --comm flat; auto at 0.95 of it (111.8 samples/s over all its steps)"),
            std::string::npos)
      << table;
  EXPECT_TRUE(std::filesystem::exists(out + "/testbed_vs_ddp.csv"));
}

// A host whose all-reduce alone outlasts the others' whole step trains nothing, and the step lasts as long as
// that all-reduce: 100 samples in 10 s, not the 18.2 samples/s of the formula with every host training.
TEST(TestbedSummary, LimitLeavesOutAHostWhoseAllReduceOutlastsTheStep) {
  const auto result = balancenet::testing::runProcess(
      {BALANCENET_PYTHON_EXE, "-c",
       "import sys; sys.path.insert(0, '" + kBench +
           "'); import testbed_limit as t; print(round(t.limit([100, 100], [0, 1.0], [1, 0.1], 100), 3), "
           "round(t.limit([200, 100], [0.05, 0.05], [0.5, 0.25], 100), 3))"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, "10.0 214.286\n");
}

}  // namespace

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

// Issue 54's rows: balanced with each --grad-compress, auto with lossy exchanges, DDP with each of its hooks,
// labelled by their flags, after the --comm modes and before DDP, each with its ratio to plain DDP.
TEST(TestbedSummary, FewerBitsRowsAreNamedByTheirFlagsAndComparedWithDdp) {
  balancenet::testing::TempDir dir;
  const std::string out = dir.path();
  std::ofstream(out + "/scenarios.txt") << "TSLOW 100 0.5,0.5 0.85 - 50,50 - cnn 2\n";
  writeRun(out + "/alone/q0.5-b100", {1000, 500, 500}, 100);
  std::filesystem::create_directories(out + "/TSLOW");
  writeRun(out + "/TSLOW/bn-balanced", {9999, 9999, 1000, 1000, 1000}, 100);   // 100 samples/s
  writeRun(out + "/TSLOW/bn-gc-powersgd4", {9999, 9999, 250, 250, 250}, 100);  // 400
  writeRun(out + "/TSLOW/bn-gc-int8", {9999, 9999, 400, 400, 400}, 100);       // 250
  writeRun(out + "/TSLOW/bn-auto-lossy", {9999, 9999, 200, 200, 200}, 100);    // 500
  std::ofstream(out + "/TSLOW/ddp.json")
      << R"({"global_batch": 100, "step_seconds": [9, 9, 2, 2, 2], "evaluations": []})";
  std::ofstream(out + "/TSLOW/ddp-powersgd4.json")
      << R"({"global_batch": 100, "step_seconds": [9, 9, 0.4, 0.4, 0.4], "evaluations": []})";
  std::ofstream(out + "/TSLOW/ddp-bf16.json")
      << R"({"global_batch": 100, "step_seconds": [9, 9, 1, 1, 1], "evaluations": []})";

  const auto result =
      balancenet::testing::runProcess({BALANCENET_PYTHON_EXE, kBench + "/testbed_vs_ddp_summary.py", out, "1"});
  const std::string& table = result.output;
  ASSERT_EQ(result.exitCode, 0) << table;
  const auto row = [&](const std::string& system, const std::string& rate, const std::string& ratio) {
    const auto at = table.find("| " + system + " | " + rate + " |");
    EXPECT_NE(at, std::string::npos) << system << "\n" << table;
    if (at == std::string::npos) return at;
    EXPECT_NE(table.substr(at, table.find('\n', at) - at).find("| " + ratio + " |"), std::string::npos)
        << system << "'s ratio to DDP\n"
        << table;
    return at;
  };
  const auto balanced = row("balancenet, balanced (the default --comm)", "100.0", "2.00");
  const auto int8 = row("balancenet, balanced, --grad-compress int8", "250.0", "5.00");
  const auto powersgd = row("balancenet, balanced, --grad-compress powersgd:4", "400.0", "8.00");
  const auto lossy = row("balancenet, --comm auto --allow-lossy-comm", "500.0", "10.00");
  const auto hookBf16 = row("PyTorch DDP, bf16_compress_hook", "100.0", "2.00");
  const auto hookPowerSgd = row("PyTorch DDP, PowerSGD hook, rank 4", "250.0", "5.00");
  const auto ddp = row("PyTorch DDP", "50.0", "1.00");
  EXPECT_LT(balanced, int8);
  EXPECT_LT(int8, powersgd);
  EXPECT_LT(powersgd, lossy);
  EXPECT_LT(lossy, hookBf16);
  EXPECT_LT(hookBf16, hookPowerSgd);
  EXPECT_LT(hookPowerSgd, ddp);
  EXPECT_NE(table.find("| TSLOW | 0.5/0.5 cores, every link 50 Mbit/s | 100 |"), std::string::npos) << table;
}

// Issue 52's rows: Lightning with BalancedStrategy and with strategy "ddp" (bench/framework_peer.py's summaries,
// ddp_peer.py's format) after PyTorch DDP, each compared with it; the launcher's run folder is not a row.
TEST(TestbedSummary, LightningRowsFollowDdpWithTheirRatios) {
  balancenet::testing::TempDir dir;
  const std::string out = dir.path();
  std::ofstream(out + "/scenarios.txt") << "T1 100 0.5,0.25 0.85 3 - - cnn 2\n";
  writeRun(out + "/alone/q0.5-b100", {1000, 500, 500}, 100);
  writeRun(out + "/alone/q0.25-b100", {1000, 1000, 1000}, 100);
  std::filesystem::create_directories(out + "/T1");
  writeRun(out + "/T1/bn-balanced", {9999, 9999, 400, 400, 400}, 100);  // 250 samples/s
  writeRun(out + "/T1/lightning-balanced-run", {1, 1, 1, 1, 1}, 100);   // the launcher's run folder
  std::ofstream(out + "/T1/ddp.json") << R"({"global_batch": 100, "step_seconds": [9, 9, 1, 1, 1], "evaluations": []})";
  std::ofstream(out + "/T1/lightning-ddp.json")
      << R"({"global_batch": 100, "step_seconds": [9, 9, 1.25, 1.25, 1.25], "evaluations": []})";
  std::ofstream(out + "/T1/lightning-balanced.json")
      << R"({"global_batch": 100, "step_seconds": [9, 9, 0.5, 0.5, 0.5], "evaluations": []})";

  const auto result =
      balancenet::testing::runProcess({BALANCENET_PYTHON_EXE, kBench + "/testbed_vs_ddp_summary.py", out, "1"});
  const std::string& table = result.output;
  ASSERT_EQ(result.exitCode, 0) << table;
  const auto ddp = table.find("| PyTorch DDP | 100.0 |");
  const auto balanced = table.find("| Lightning, balancenet's BalancedStrategy | 200.0 | 300.0 |");
  const auto plain = table.find("| Lightning, strategy \"ddp\" | 80.0 | 300.0 |");
  ASSERT_NE(ddp, std::string::npos) << table;
  ASSERT_NE(balanced, std::string::npos) << table;
  ASSERT_NE(plain, std::string::npos) << table;
  EXPECT_LT(ddp, balanced);
  EXPECT_LT(balanced, plain);
  EXPECT_NE(table.substr(balanced, table.find('\n', balanced) - balanced).find("| 2.00 |"), std::string::npos) << table;
  EXPECT_NE(table.substr(plain, table.find('\n', plain) - plain).find("| 0.80 |"), std::string::npos) << table;
  EXPECT_EQ(table.find("lightning-balanced-run"), std::string::npos) << table;
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

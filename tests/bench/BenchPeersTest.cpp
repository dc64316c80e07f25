// The benchmarks' own parts that a number depends on: bench/ddp_peer.py's resnet18 is the zoo's,
// bench/lib/rates.sh's table computes the ratios it prints, and bench/python_vs_ddp.sh and the memory benchmarks
// (bench/memory_capped.sh, bench/recompute_capped.sh) run every side at a smoke size.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "balancenet/models/ModelZoo.h"
#include "testing/TempDir.h"

namespace {

// The command's stdout, and whether it exited 0.
std::pair<std::string, bool> run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {"", false};
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  return {out, pclose(pipe) == 0};
}

// Whether the project's Python has torch: the bench scripts' peers need it.
bool pythonHasTorch() {
  return run(std::string(BALANCENET_PYTHON_EXE) + " -c 'import torch.distributed' 2>/dev/null").second;
}

// Runs `bash bench/SCRIPT OUT ARGS` in the source tree with ENV before it; its stdout and stderr, and whether it
// exited 0.
std::pair<std::string, bool> runBench(const std::string& env, const std::string& script, const std::string& out,
                                      const std::string& args = "") {
  return run(std::string("cd ") + BALANCENET_SOURCE_DIR + " && " + env + " bash bench/" + script + " " + out +
             (args.empty() ? "" : " " + args) + " 2>&1");
}

// bench/resnet_imagefolder.sh and bench/testbed_vs_ddp.sh (MODEL=resnet18, width 0.5) compare balancenet's
// resnet18 with DDP's: the two must be one network, at the CIFAR stem (28 pixels), the ImageNet stem (64) and
// half the channels.
TEST(BenchPeers, DdpPeerResnet18HasTheZoosParameters) {
  const std::vector<std::pair<int64_t, double>> shapes{{28, 1.0}, {64, 1.0}, {28, 0.5}};
  // One Python for the three (each start imports torch and torchvision: seconds).
  std::string script = "import ddp_peer\n";
  for (const auto& [size, width] : shapes)
    script += "print(sum(p.numel() for p in ddp_peer.make_model('resnet18', " + std::to_string(size) + ", " +
              std::to_string(width) + ").parameters()))\n";
  const auto [out, ok] =
      run(std::string("cd ") + BALANCENET_SOURCE_DIR + "/bench && " + BALANCENET_PYTHON_EXE + " -c \"" + script + "\"");
  ASSERT_TRUE(ok) << out << "(does " << BALANCENET_PYTHON_EXE << " have torch and torchvision? scripts/setup.sh)";
  std::istringstream counts(out);
  for (const auto& [size, width] : shapes) {
    balancenet::models::ModelOptions options;
    options.name = "resnet18";
    options.inputShape = {1, size, size};
    options.width = width;
    const auto zoo = balancenet::models::buildModel(options).info.parameters;
    int64_t count = -1;
    ASSERT_TRUE(counts >> count) << out;
    EXPECT_EQ(count, zoo) << "at " << size << " pixels, width " << width;
  }
}

// bench/python_vs_ddp.sh's smoke mode (QUICK=1: 4 steps): plain DDP and the same script with balancenet.torch's
// lines, each under `balancenet launch --workers 4`, and the table of the two with its ratios and target.
TEST(BenchPeers, PythonVsDdpQuickRunsBothSidesAndPrintsTheTable) {
  ASSERT_TRUE(pythonHasTorch()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  balancenet::testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  const auto [table, ok] =
      runBench(std::string("QUICK=1 BALANCENET_BINARY=") + BALANCENET_BINARY, "python_vs_ddp.sh", out, "homo");
  ASSERT_TRUE(ok) << table;
  const std::regex row(
      R"(\| homo \| [0-9]+\.[0-9] \| [0-9]+\.[0-9] \| [0-9]+\.[0-9]{2}x \| n/r \| n/r \| n/r \| >= 0\.97x at 0%: )"
      R"((met|\*\*not met\*\*), n/r \| 4 / 4 \| [0-9.]+% / [0-9.]+% \|)");
  EXPECT_TRUE(std::regex_search(table, row)) << table;
  // The balancenet side really ran under balancenet: its session wrote the run's files, 4 steps of 4 ranks.
  std::ifstream summary(out + "/homo/balancenet.json");
  std::stringstream text;
  text << summary.rdbuf();
  EXPECT_NE(text.str().find("\"framework\": \"balancenet.torch\""), std::string::npos) << text.str();
  EXPECT_TRUE(std::filesystem::exists(out + "/homo/balancenet-run/summary.json"));
  std::ifstream steps(out + "/homo/balancenet-run/steps.csv");
  int lines = 0;
  for (std::string line; std::getline(steps, line);) ++lines;
  EXPECT_EQ(lines, 1 + 4 * 4);
}

// bench/memory_capped.sh (M1) at a smoke size: every side runs, the cap binds where it should (the one-pass run holds
// worker 3 to its pass of 2 samples, the auto run gives it more in several passes), and the summary prints its ratios.
TEST(BenchPeers, MemoryCappedQuickRunsEverySideAndTheCapBinds) {
  ASSERT_TRUE(pythonHasTorch()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  balancenet::testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  const auto [table, ok] =
      runBench(std::string("STEPS=8 WARMUP=2 BATCH=32 BN=") + BALANCENET_BINARY, "memory_capped.sh", out);
  ASSERT_TRUE(ok) << table;
  for (const char* name : {"bn-uncapped", "bn-one-pass", "bn-auto", "ddp", "ddp-accumulate"})
    EXPECT_NE(table.find(std::string("| ") + name + " | "), std::string::npos) << name << "\n" << table;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(table, m, std::regex(R"(\| bn-one-pass \| [0-9.]+ \| ([0-9.]+), ([0-9.]+) \|)")))
      << table;
  EXPECT_LE(std::stod(m[1]), 2) << table;
  EXPECT_EQ(std::stod(m[2]), 1) << table;
  ASSERT_TRUE(std::regex_search(table, m, std::regex(R"(\| bn-auto \| [0-9.]+ \| ([0-9.]+), ([0-9.]+) \|)"))) << table;
  EXPECT_GT(std::stod(m[2]), 1) << "worker 3 took its share in one pass under auto\n" << table;
  EXPECT_NE(table.find("auto / one-pass shares: "), std::string::npos) << table;
}

// bench/recompute_capped.sh at a smoke size: every side runs, the one-pass run holds worker 1 to its pass (a third of
// its 24), the recompute run gives it more in one pass (the script checks its log says it recomputes), and the summary
// prints its ratios.
TEST(BenchPeers, RecomputeCappedQuickRunsEverySideAndTheCappedWorkerRecomputes) {
  ASSERT_TRUE(pythonHasTorch()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  balancenet::testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  const auto [table, ok] =
      runBench(std::string("STEPS=6 WARMUP=2 BATCH=48 BN=") + BALANCENET_BINARY, "recompute_capped.sh", out);
  ASSERT_TRUE(ok) << table;
  for (const char* name :
       {"bn-uncapped", "bn-one-pass", "bn-accumulate", "bn-recompute", "ddp", "ddp-accumulate", "ddp-recompute"})
    EXPECT_NE(table.find(std::string("| ") + name + " | "), std::string::npos) << name << "\n" << table;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(table, m, std::regex(R"(\| bn-one-pass \| [0-9.]+ \| ([0-9.]+), ([0-9.]+) \|)")))
      << table;
  EXPECT_LE(std::stod(m[1]), 8) << table;
  ASSERT_TRUE(std::regex_search(table, m, std::regex(R"(\| bn-recompute \| [0-9.]+ \| ([0-9.]+), ([0-9.]+) \|)")))
      << table;
  EXPECT_GT(std::stod(m[1]), 8) << "worker 1 held to its one-pass share although it recomputes\n" << table;
  EXPECT_EQ(std::stod(m[2]), 1) << table;
  EXPECT_NE(table.find("over the one-pass shares: recompute "), std::string::npos) << table;
}

// bench/memory_estimate.py: the memory model's MB a sample against glibc's bytes in use over a pass, one row per case,
// each measured above zero (a slope of the peak between two batch sizes) and its ratio printed.
TEST(BenchPeers, MemoryEstimateMeasuresEveryCase) {
  ASSERT_TRUE(pythonHasTorch()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  const auto [table, ok] = run(std::string("cd ") + BALANCENET_SOURCE_DIR + " && " + BALANCENET_PYTHON_EXE +
                               " bench/memory_estimate.py " + BALANCENET_BINARY + " 2>&1");
  ASSERT_TRUE(ok) << table;
  const std::regex row(R"(\| (cnn|resnet18) \| [0-9.]+ \| (none|blocks) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|)");
  int rows = 0;
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it, ++rows) {
    EXPECT_GT(std::stod((*it)[3]), 0) << table;
    EXPECT_GT(std::stod((*it)[4]), 0) << "nothing measured\n" << table;
  }
  EXPECT_EQ(rows, 3) << table;
}

}  // namespace

// examples/*.sh in their quick mode (STEPS=5, small data): each converts its real data, trains, exits 0
// and writes summary.json, so the commands that docs/data.md and the README show keep working.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "testing/ProcessRunner.h"
#include "testing/TempDir.h"

namespace balancenet::testing {
namespace {

struct ExampleRun {
  ProcessResult process;
  nlohmann::json summary;
};

// Runs examples/<script> with its outputs in `dir`, 5 steps, one thread per worker, and `flags` after the
// example's own (the last value of a flag wins), then reads the run's summary.json.
ExampleRun runExample(const TempDir& dir, const std::string& script, std::map<std::string, std::string> env,
                      const std::vector<std::string>& flags) {
  env.insert(
      {{"BALANCENET", BALANCENET_BINARY}, {"OUT", dir.file("out")}, {"RUN_DIR", dir.file("run")}, {"STEPS", "5"}});
  std::vector<std::string> argv{std::string(BALANCENET_SOURCE_DIR) + "/examples/" + script, "--threads", "1",
                                "--eval-every", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  ProcessOptions options;
  options.env = env;
  options.timeoutSeconds = 240;
  ExampleRun run{runProcess(argv, options), {}};
  std::ifstream in(dir.file("run/summary.json"));
  if (in) run.summary = nlohmann::json::parse(in);
  return run;
}

void expectTrained(const ExampleRun& run, const std::string& model) {
  ASSERT_EQ(run.process.exitCode, 0) << run.process.output;
  ASSERT_FALSE(run.summary.is_null()) << "no summary.json\n" << run.process.output;
  EXPECT_EQ(run.summary["model"], model);
  EXPECT_EQ(run.summary["steps"], 5);
  EXPECT_EQ(run.summary["nodes"], 2);
  ASSERT_FALSE(run.summary["evaluations"].empty());
  EXPECT_TRUE(std::isfinite(run.summary["evaluations"].back()["loss"].get<double>()));
}

TEST(Examples, CharGptTrainsOnTheFortunesText) {
  TempDir dir;
  // The held-out end cut to 1% (25 KB) and a small batch: the quick mode's evaluation stays short.
  const auto run = runExample(dir, "char-gpt.sh", {}, {"--global-batch", "8", "--val-fraction", "0.01"});
  expectTrained(run, "gpt");
  // The converter's line: the size and the unigram entropy of English bytes (about 4.8 bits).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.process.output, m,
                                std::regex(R"(: (\d+) bytes from (\d+) databases, unigram entropy ([0-9.]+))")))
      << run.process.output;
  EXPECT_GT(std::stoll(m[1]), 2000000);
  EXPECT_NEAR(std::stod(m[3]), 4.8, 0.3);
  EXPECT_EQ(std::filesystem::file_size(dir.file("out/fortunes.txt")), std::stoull(m[1]));
  // A model that has trained 5 steps is still near the uniform 8 bits per byte (ln 256 nats), not past it.
  EXPECT_LT(run.summary["evaluations"].back()["loss"].get<double>(), std::log(256.0) + 0.5);
}

TEST(Examples, NpyRegressionTrainsAnMlpWithMse) {
  TempDir dir;
  const auto run = runExample(dir, "npy-regression.sh", {{"ROWS", "2000"}}, {});
  expectTrained(run, "mlp");
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/X.npy")));
  EXPECT_TRUE(run.summary["final_accuracy"].is_null() || run.summary["final_accuracy"] == 0)
      << "a regression has no accuracy";
}

TEST(Examples, ImageFolderTrainsAResnetWithAugmentation) {
  TempDir dir;
  const auto run = runExample(dir, "imagefolder.sh", {{"LIMIT", "40"}}, {"--global-batch", "16"});
  expectTrained(run, "resnet18");
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/images/train/9_ankle_boot")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/images/val/0_tshirt_top")));
}

TEST(Examples, AnUnbuiltProgramIsOneLineAndExitCode2) {
  TempDir dir;
  ProcessOptions options;
  options.env = {{"BALANCENET", dir.file("missing/balancenet")}, {"OUT", dir.file("out")}};
  const auto r = runProcess({std::string(BALANCENET_SOURCE_DIR) + "/examples/npy-regression.sh"}, options);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.output, "npy-regression.sh: " + dir.file("missing/balancenet") +
                          " is not built (run scripts/setup.sh, or set BALANCENET)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << "nothing is written before the check";
}

}  // namespace
}  // namespace balancenet::testing

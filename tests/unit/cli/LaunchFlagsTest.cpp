// parseLaunchFlags and splitLaunchWords: launch's flag words become a validated JobConfig, the program stays whole.
#include "balancenet/cli/flags/LaunchFlags.h"

#include <gtest/gtest.h>

#include "testing/LauncherViewTest.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

using balancenet::testing::expectOneLineUsageError;

class LaunchFlags : public LauncherViewTest {};

void expectLaunchRefused(const std::vector<std::string>& words, const std::string& fragment) {
  expectOneLineUsageError([&] { parseLaunchFlags(words); }, fragment);
}

TEST_F(LaunchFlags, WithoutSplitTheGlobalBatchIsTheProgramsAndPythonIsDebians) {
  const auto c = parseLaunchFlags({"--workers", "3", "--threads", "2"});
  EXPECT_EQ(c.launch.worldSize(), 3);
  EXPECT_EQ(c.trainer.globalBatch, 0);
  EXPECT_TRUE(c.split.batches.empty());
  EXPECT_EQ(c.orchestration.policy, "balanced");
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.program.python, BALANCENET_PYTHON_EXE);
  EXPECT_FALSE(c.program.given());  // the program is the command's words, not a flag
  EXPECT_EQ(c.argv, (std::vector<std::string>{"--workers", "3", "--threads", "2"}));
  EXPECT_FALSE(c.worker.has_value()) << "reads no environment";
}

TEST_F(LaunchFlags, SplitSetsTheGlobalBatchAndNeedsOneEntryPerWorker) {
  const auto c = parseLaunchFlags({"--workers", "3", "--split", "5,20,7"});
  EXPECT_EQ(c.split.batches, (std::vector<int64_t>{5, 20, 7}));
  EXPECT_EQ(c.trainer.globalBatch, 32);
  EXPECT_EQ(c.orchestration.policy, "static");
  EXPECT_EQ(parseLaunchFlags({"--workers", "3", "--split", "5,20,7", "--policy", "balanced"}).orchestration.policy,
            "balanced");
  expectLaunchRefused({"--workers", "2", "--split", "5,20,7"}, "--split has 3 entries but the job has 2 workers");
  expectLaunchRefused({"--workers", "2", "--split", "5,x"}, "--split: 'x' is not an integer");
  expectLaunchRefused({"--workers", "2", "--split", "5,0"}, "every worker needs at least 1");
}

TEST_F(LaunchFlags, TrainsGroupsAreValidatedAsForTrain) {
  const auto c = parseLaunchFlags({"--workers", "4", "--elastic", "--min-workers", "2", "--max-restarts", "1",
                                   "--node-speed", "100,100,100,25", "--progress-seconds", "3", "--run-dir", "r"});
  EXPECT_TRUE(c.resilience.elastic);
  EXPECT_EQ(c.resilience.minNodes, 2);
  EXPECT_EQ(c.resilience.maxNodes, 4);
  EXPECT_FALSE(c.emulation.nodeSpeed.empty());
  EXPECT_EQ(c.trainer.progressSeconds, 3);
  EXPECT_EQ(c.trainer.runDir, "r");
  expectLaunchRefused({"--workers", "0"}, "--workers must be at least 1, got 0");
  expectLaunchRefused({"--workers", "2", "--slowdown", "1,2,3"}, "--slowdown");
  expectLaunchRefused({"--max-restarts", "1"}, "--max-restarts needs --elastic");
  expectLaunchRefused({"--policy", "fastest"}, "unknown --policy 'fastest'");
  expectLaunchRefused({"--nnodes", "2"}, "needs --master-port");
  expectLaunchRefused({"--global-batch", "64"}, "--global-batch");  // the program's loader has it
  expectLaunchRefused({"--save-params", "p.pt"}, "--save-params");  // train's, which a program cannot honour
}

TEST_F(LaunchFlags, PythonIsAnExecutableFileOrNoneWithNoPython) {
  testing::TempDir dir;
  expectLaunchRefused({"--python", dir.file("python9")}, "--python " + dir.file("python9") + ": no such file");
  expectLaunchRefused({"--python", dir.path()}, "not an executable file");
  expectLaunchRefused({"--python", "no-such-python-here"}, "'no-such-python-here': no such executable on PATH");
  expectLaunchRefused({"--python", BALANCENET_PYTHON_EXE, "--no-python"}, "exclude each other");
  EXPECT_EQ(parseLaunchFlags({"--no-python"}).program.python, "");
  EXPECT_EQ(parseLaunchFlags({"--python", "/bin/sh"}).program.python, "/bin/sh");
}

TEST_F(LaunchFlags, TheProgramStartsAtTheFirstWordThatIsNoFlagOrAfterTheMark) {
  auto split = splitLaunchWords({"--workers", "3", "train.py", "--lr", "0.1", "--workers", "2"});
  EXPECT_EQ(split.flags, (std::vector<std::string>{"--workers", "3"}));
  EXPECT_EQ(split.program, (std::vector<std::string>{"train.py", "--lr", "0.1", "--workers", "2"}));
  split = splitLaunchWords({"--elastic", "--workers=2", "--", "--odd-name.py", "--", "x"});
  EXPECT_EQ(split.flags, (std::vector<std::string>{"--elastic", "--workers=2"}));
  EXPECT_EQ(split.program, (std::vector<std::string>{"--odd-name.py", "--", "x"}));
  split = splitLaunchWords({"--bogus", "train.py"});  // an unknown flag stays a flag: the parse refuses it
  EXPECT_EQ(split.flags, (std::vector<std::string>{"--bogus"}));
  EXPECT_EQ(split.program, (std::vector<std::string>{"train.py"}));
  EXPECT_TRUE(splitLaunchWords({"--workers", "2"}).program.empty());
}

TEST_F(LaunchFlags, TheSplitSetsTheGlobalBatchAndTheRunDirStaysAsGiven) {
  const auto c = parseLaunchFlags({"--workers", "2", "--split", "3,5", "--run-dir", "runs/x y"});
  EXPECT_EQ(c.trainer.globalBatch, 8);
  EXPECT_EQ(c.trainer.runDir, "runs/x y");
}

}  // namespace
}  // namespace balancenet::cli

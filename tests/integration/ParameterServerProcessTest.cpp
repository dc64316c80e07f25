// Parameter servers as real processes: BSP matches one process, SSP completes, a killed server ends
// the job with one line naming it, and bad flag combinations are usage errors.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "BinaryFixture.h"
#include "CsvRows.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

// The launcher's child started as parameter server `index`, or -1.
pid_t serverProcess(pid_t launcher, int index) {
  const std::string mark = fmt::format("BALANCENET_PS_SERVER={}", index);
  for (pid_t child : childrenOf(launcher)) {
    std::ifstream in(fmt::format("/proc/{}/environ", child), std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(mark + '\0') != std::string::npos) return child;
  }
  return -1;
}

class ParameterServerProcess : public BinaryFixture {
 protected:
  const std::vector<std::string> common_{
      "--model", "mlp",  "--width",    "0.25", "--dropout",      "0",    "--global-batch",     "24", "--steps", "5",
      "--lr",    "0.05", "--momentum", "0.9",  "--weight-decay", "5e-4", "--progress-seconds", "0"};
  ProcessResult trainWith(std::vector<std::string> flags, ProcessOptions options = {}) {
    flags.insert(flags.begin(), common_.begin(), common_.end());
    return train(flags, options);
  }
};

TEST_F(ParameterServerProcess, BspWithTwoServersMatchesOneProcess) {
  auto r = trainWith({"--nodes", "2", "--split", "5,19", "--comm", "ps", "--ps", "2", "--explain-comm", "--save-params",
                      dir_.file("ps.pt")});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("[server 0] "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[server 1] "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("server 1: "), std::string::npos) << "no shard layout in --explain-comm:\n" << r.output;
  auto single = trainWith({"--nodes", "1", "--save-params", dir_.file("one.pt"), "--run-dir", dir_.file("run1")});
  ASSERT_EQ(single.exitCode, 0) << single.output;
  const auto one = loadSavedParameters(dir_.file("one.pt"));
  const double diff = maxAbsDifference(loadSavedParameters(dir_.file("ps.pt")), one);
  const double bound = exactnessBound(one, 5);  // common_'s --steps
  std::printf("2 workers (split 5,19) + 2 servers vs 1 process: max |param difference| = %.3g (float bound %.3g)\n",
              diff, bound);
  EXPECT_LT(diff, bound);
}

// --grad-compress int8 with real server processes: the servers take the workers' compressed pushes (a server given
// float32 messages of another size would fail the step), the explanation says so, and the pushes' bytes shrink.
TEST_F(ParameterServerProcess, CompressedPushesReachServerProcesses) {
  auto exact =
      trainWith({"--nodes", "2", "--split", "5,19", "--comm", "ps", "--ps", "2", "--run-dir", dir_.file("exact")});
  ASSERT_EQ(exact.exitCode, 0) << exact.output;
  auto r = trainWith({"--nodes", "2", "--split", "5,19", "--comm", "ps", "--ps", "2", "--grad-compress", "int8",
                      "--explain-comm", "--run-dir", dir_.file("int8")});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("pushes as int8 with error feedback; replies (the parameters) float32"), std::string::npos)
      << r.output;
  const auto steps = readCsvRows(dir_.file("int8/steps.csv")), exactSteps = readCsvRows(dir_.file("exact/steps.csv"));
  ASSERT_EQ(steps.size(), exactSteps.size());
  // A push of n floats is 1 + ceil(n / 4) floats after the header; the reply stays n.
  const double ratio = std::stod(steps.back().at("bytes_sent")) / std::stod(exactSteps.back().at("bytes_sent"));
  EXPECT_GT(ratio, 0.24);
  EXPECT_LT(ratio, 0.27);
  EXPECT_NEAR(std::stod(steps.back().at("loss")), std::stod(exactSteps.back().at("loss")), 0.05);
}

TEST_F(ParameterServerProcess, SspWithSlowWorkerCompletes) {
  auto r = trainWith({"--nodes", "2", "--comm", "ps", "--ps", "2", "--staleness", "2", "--slowdown", "1,4"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // Each server's closing line: every push of both workers applied, the lead within the bound.
  int servers = 0;
  for (size_t at = 0; (at = r.output.find("pushes applied, largest clock gap ", at)) != std::string::npos; ++at) {
    ++servers;
    const int gap = std::stoi(r.output.substr(at + std::string("pushes applied, largest clock gap ").size()));
    EXPECT_LE(gap, 2) << r.output;
    std::printf("SSP (staleness 2, worker 1 slowed 4x): a server saw a lead of %d step(s)\n", gap);
  }
  EXPECT_EQ(servers, 2) << r.output;
  EXPECT_NE(r.output.find("10 pushes applied"), std::string::npos) << r.output;
}

TEST_F(ParameterServerProcess, KilledServerEndsTheJobNamingIt) {
  ProcessOptions o;
  o.timeoutSeconds = 120;
  pid_t victim = -1;
  double killedAt = 0;
  o.whileRunning = [&](pid_t launcher, double elapsed) {
    if (victim == -1 && elapsed > 3 && childrenOf(launcher).size() == 3) {
      victim = serverProcess(launcher, 0);
      if (victim == -1) return;
      ::kill(victim, SIGKILL);
      killedAt = elapsed;
    }
  };
  auto r =
      trainWith({"--nodes", "2", "--comm", "ps", "--ps", "1", "--steps", "1000000", "--rendezvous-timeout", "20"}, o);
  ASSERT_NE(victim, -1) << "the server never came up:\n" << r.output;
  expectOneLineError(r, fmt::format("parameter server 0 (pid {}) was killed by signal 9", victim), 1);
  std::printf("server killed at %.1f s; the job ended %.2f s later\n", killedAt, r.seconds - killedAt);
  EXPECT_LT(r.seconds - killedAt, 15);
}

TEST_F(ParameterServerProcess, BadFlagCombinationsAreUsageErrors) {
  expectOneLineError(trainWith({"--comm", "ps"}), "--comm ps needs --ps K", 2);
  expectOneLineError(trainWith({"--comm", "ps", "--ps", "0"}), "--ps must be at least 1 with --comm ps, got 0", 2);
  expectOneLineError(trainWith({"--ps", "2"}), "--ps is for --comm ps (got --comm auto)", 2);
  expectOneLineError(trainWith({"--staleness", "1"}), "--staleness is for --comm ps", 2);
  expectOneLineError(trainWith({"--comm", "ps", "--ps", "1", "--staleness", "-1"}), "--staleness must not be negative",
                     2);
  expectOneLineError(trainWith({"--comm", "ps", "--ps", "1", "--staleness", "2", "--policy", "balanced"}),
                     "--staleness 2 (SSP) needs a fixed split: --policy equal or static, not --policy balanced", 2);
  expectOneLineError(trainWith({"--comm", "ps", "--ps", "1", "--staleness", "1", "--sync-bn"}),
                     "--sync-bn synchronises every forward pass, which --staleness > 0 (SSP) must not", 2);
}

}  // namespace
}  // namespace balancenet::testing

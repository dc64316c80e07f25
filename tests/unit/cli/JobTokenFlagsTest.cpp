// The job token flags as train, federate and launch settle them: where the token comes from, where auto may make
// one up, and which processes are refused for going beyond loopback without one.
#include "balancenet/cli/flags/JobTokenFlags.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "balancenet/cli/FederateCommand.h"
#include "balancenet/cli/YamlConfig.h"
#include "balancenet/cli/flags/LaunchFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/job/JobDefaults.h"
#include "testing/LauncherViewTest.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

using balancenet::testing::expectOneLineUsageError;
using balancenet::testing::usageErrorOf;

const std::vector<std::string> kNode0{"--nnodes",      "2",        "--node-rank",   "0",
                                      "--master-addr", "10.0.0.1", "--master-port", "29500"};

std::vector<std::string> node(int rank, std::vector<std::string> more = {}) {
  auto flags = kNode0;
  flags[3] = std::to_string(rank);
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

class JobTokenFlags : public LauncherViewTest {
 protected:
  std::string tokenFile(const std::string& text) {
    const std::string path = dir_.file("job-token");
    std::ofstream(path) << text;
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
  }
  // A worker started by another launcher: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
  void startedAsRank(int rank) {
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", "2", 1);
    ::setenv("MASTER_ADDR", "10.0.0.1", 1);
    ::setenv("MASTER_PORT", "29500", 1);
  }
  void TearDown() override { LauncherViewTest::SetUp(); }  // what a test set goes, for the next
  void expectRefused(const std::vector<std::string>& args, const std::string& fragment) {
    expectOneLineUsageError([&] { parseTrainCommandLine(args); }, fragment);
  }
  balancenet::testing::TempDir dir_;
};

const std::string kOpen = "is reachable from other hosts and this process has no job token";

TEST_F(JobTokenFlags, EveryProcessOfAJobBeyondLoopbackNeedsATokenOrAnOpenJob) {
  expectRefused(node(0), "the job's store at 10.0.0.1:29500 " + kOpen);
  expectRefused(node(1), kOpen);
  startedAsRank(1);
  expectRefused({}, kOpen);
}

TEST_F(JobTokenFlags, InsecureOpenJobLoopbackAndOneHostRunWithoutAToken) {
  const auto open = parseTrainCommandLine(node(0, {"--insecure-open-job"}));
  EXPECT_TRUE(open.launch.insecureOpen);
  EXPECT_TRUE(open.launch.jobToken.empty());
  EXPECT_TRUE(parseTrainCommandLine({"--nnodes", "2", "--master-port", "29500"}).launch.jobToken.empty());
  // One host: the workers meet through a private file, whatever --master-addr says.
  EXPECT_TRUE(parseTrainCommandLine({"--workers", "2", "--master-addr", "10.0.0.1"}).launch.jobToken.empty());
}

TEST_F(JobTokenFlags, TheTokenComesFromTheFileTheFlagOrTheEnvironment) {
  EXPECT_EQ(parseTrainCommandLine(node(1, {"--job-token-file", tokenFile("from-the-file\n")})).launch.jobToken,
            "from-the-file");
  EXPECT_EQ(parseTrainCommandLine(node(1, {"--job-token", "from-the-flag"})).launch.jobToken, "from-the-flag");
  ::setenv("BALANCENET_JOB_TOKEN", "from-the-environment", 1);
  EXPECT_EQ(parseTrainCommandLine(node(1)).launch.jobToken, "from-the-environment");
  EXPECT_EQ(parseTrainCommandLine(node(1, {"--job-token-file", tokenFile("file-wins\n")})).launch.jobToken,
            "file-wins");
  // launch's launcher reads no worker environment, yet takes the token from it.
  EXPECT_EQ(parseLaunchFlags(node(0)).launch.jobToken, "from-the-environment");
}

TEST_F(JobTokenFlags, AutoIsMadeUpWhereTheStoreIsServedAndNowhereElse) {
  const auto launcher = parseTrainCommandLine(node(0, {"--job-token", "auto"}));
  EXPECT_TRUE(launcher.launch.tokenMadeUp);
  EXPECT_EQ(launcher.launch.jobToken.size(), 32u);
  EXPECT_NE(parseTrainCommandLine(node(0, {"--job-token", "auto"})).launch.jobToken, launcher.launch.jobToken);
  const std::string notHere = "--job-token auto makes the token on the process that serves the job's store";
  expectRefused(node(1, {"--job-token", "auto"}),
                notHere +
                    " (node 0's launcher, or rank 0 started by another "
                    "launcher), which this one does not: give it the token node 0 printed");
  startedAsRank(1);
  expectRefused({"--job-token", "auto"}, notHere);
  startedAsRank(0);  // rank 0 of another launcher serves the store itself
  EXPECT_TRUE(parseTrainCommandLine({"--job-token", "auto"}).launch.tokenMadeUp);
}

TEST_F(JobTokenFlags, AutoTakesATokenTheEnvironmentGives) {
  // A launcher's workers get its words (auto included) and its token in their environment.
  ::setenv("BALANCENET_JOB_TOKEN", "the-launchers-token", 1);
  for (int rank : {0, 1}) {
    const auto c = parseTrainCommandLine(node(rank, {"--job-token", "auto"}));
    EXPECT_EQ(c.launch.jobToken, "the-launchers-token");
    EXPECT_FALSE(c.launch.tokenMadeUp);
  }
}

TEST_F(JobTokenFlags, TheWaysToGiveATokenExcludeEachOther) {
  const std::string file = tokenFile("t\n");
  expectRefused({"--job-token", "t", "--job-token-file", file}, "--job-token excludes --job-token-file");
  expectRefused({"--job-token", "t", "--insecure-open-job"}, "--job-token excludes --insecure-open-job");
  expectRefused({"--job-token-file", file, "--insecure-open-job"}, "--job-token-file excludes --insecure-open-job");
}

TEST_F(JobTokenFlags, FederateTakesTheSameFlags) {
  const std::vector<std::string> hosts{"--clients",     "3",        "--nnodes",      "2",    "--nproc-per-node", "2",
                                       "--master-addr", "10.0.0.1", "--master-port", "29500"};
  auto withFile = hosts;
  withFile.insert(withFile.end(), {"--job-token-file", tokenFile("federated\n")});
  EXPECT_EQ(parseFederateCommandLine(withFile).launch.jobToken, "federated");
  const auto message = usageErrorOf([&] { parseFederateCommandLine(hosts); });
  EXPECT_NE(message.find(kOpen), std::string::npos) << message;
}

TEST_F(JobTokenFlags, PrintConfigShowsNeitherTheTokenNorTheFilesContent) {
  for (const std::vector<std::string>& given : {node(0, {"--job-token", "secret-on-the-line"}),
                                                node(0, {"--job-token-file", tokenFile("secret-in-a-file\n")})}) {
    CLI::App train{"balancenet train", "train"};
    job::JobConfig config = job::defaultJobConfig();
    RawFlags raw;
    addTrainFlags(train, config, raw);
    parseSubcommandWords(train, given);
    const std::string yaml = effectiveConfigYaml(train);
    EXPECT_EQ(yaml.find("secret"), std::string::npos) << yaml;
  }
}

}  // namespace
}  // namespace balancenet::cli

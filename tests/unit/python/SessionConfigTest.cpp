// The job a Python process belongs to, from what `balancenet launch` put in its environment: the launcher's flags
// (BALANCENET_LAUNCH_ARGS) and torchrun's variables; a process that nothing launched is a job of one.
#include "balancenet/python/SessionConfig.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/launch/ProgramEnvironment.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::python {
namespace {

using balancenet::testing::usageErrorOf;

class SessionConfig : public cli::LauncherViewTest {
 protected:
  // SetUp clears RANK, ..., BALANCENET_LAUNCH_ARGS (identity variables); so does TearDown, for the next test.
  void TearDown() override { clearIdentity(); }
  static void launchedAs(int rank, int worldSize, const std::vector<std::string>& flags) {
    ::setenv(kRankVar, std::to_string(rank).c_str(), 1);
    ::setenv(kWorldSizeVar, std::to_string(worldSize).c_str(), 1);
    ::setenv(kMasterAddrVar, "127.0.0.1", 1);
    ::setenv(kMasterPortVar, "29517", 1);
    ::setenv(kLaunchArgsVar, launch::encodeLaunchArgs(flags).c_str(), 1);
  }
};

TEST_F(SessionConfig, AProcessNothingLaunchedIsAJobOfOneWritingWhereItWasTold) {
  const auto c = sessionConfigFromEnvironment("/tmp/a-run-dir");
  EXPECT_FALSE(c.worker.has_value());
  EXPECT_EQ(c.trainer.runDir, "/tmp/a-run-dir");
  EXPECT_EQ(c.orchestration.policy, "balanced");
}

TEST_F(SessionConfig, ALaunchedProcessTakesTheLaunchersFlagsAndItsRank) {
  launchedAs(1, 2, {"--policy", "equal", "--rebalance-every", "7"});
  const auto c = sessionConfigFromEnvironment("/tmp/ignored");
  ASSERT_TRUE(c.worker.has_value());
  EXPECT_EQ(c.worker->rank, 1);
  EXPECT_EQ(c.worker->worldSize, 2);
  EXPECT_EQ(c.launch.masterPort, 29517);
  EXPECT_EQ(c.orchestration.policy, "equal");
  EXPECT_EQ(c.orchestration.rebalanceEvery, 7);
}

TEST_F(SessionConfig, ABadLaunchFlagIsOneUsageErrorNamingIt) {
  launchedAs(0, 2, {"--policy", "no-such-policy"});
  const auto message = usageErrorOf([] { sessionConfigFromEnvironment(""); });
  EXPECT_NE(message.find("--policy"), std::string::npos) << message;
  EXPECT_NE(message.find("no-such-policy"), std::string::npos) << message;
}

}  // namespace
}  // namespace balancenet::python

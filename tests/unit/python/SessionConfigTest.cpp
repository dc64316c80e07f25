// The job a Python process belongs to, from what `balancenet launch` put in its environment: the job as the
// launcher resolved it (BALANCENET_JOB_CONFIG) and torchrun's variables; a process that nothing launched is a job
// of one.
#include "balancenet/python/SessionConfig.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/job/JobConfigJson.h"
#include "balancenet/job/JobDefaults.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::python {
namespace {

using balancenet::testing::usageErrorOf;

class SessionConfig : public cli::LauncherViewTest {
 protected:
  // SetUp clears RANK, ..., BALANCENET_JOB_CONFIG (identity variables); so does TearDown, for the next test.
  void TearDown() override { clearIdentity(); }
  static void launchedAs(int rank, int worldSize, const std::string& job) {
    ::setenv(kRankVar, std::to_string(rank).c_str(), 1);
    ::setenv(kWorldSizeVar, std::to_string(worldSize).c_str(), 1);
    ::setenv(kMasterAddrVar, "127.0.0.1", 1);
    ::setenv(kMasterPortVar, "29517", 1);
    ::setenv(kJobConfigVar, job.c_str(), 1);
  }
};

TEST_F(SessionConfig, AProcessNothingLaunchedIsAJobOfOneWritingWhereItWasTold) {
  const auto c = sessionConfigFromEnvironment("/tmp/a-run-dir");
  EXPECT_FALSE(c.worker.has_value());
  EXPECT_EQ(c.trainer.runDir, "/tmp/a-run-dir");
  EXPECT_EQ(c.orchestration.policy, "balanced");
}

TEST_F(SessionConfig, ALaunchedProcessTakesTheLaunchersJobAndItsOwnRank) {
  job::JobConfig launcher = job::defaultLaunchConfig();
  launcher.orchestration.policy = "equal";
  launcher.orchestration.rebalanceEvery = 7;
  launcher.trainer.runDir = "/tmp/the-launchers-run";
  launchedAs(1, 2, job::jobConfigJson(launcher));
  const auto c = sessionConfigFromEnvironment("/tmp/ignored");
  ASSERT_TRUE(c.worker.has_value());
  EXPECT_EQ(c.worker->rank, 1);
  EXPECT_EQ(c.worker->worldSize, 2);
  EXPECT_EQ(c.launch.masterPort, 29517);  // the environment's, not the launcher's configuration's
  EXPECT_EQ(c.orchestration.policy, "equal");
  EXPECT_EQ(c.orchestration.rebalanceEvery, 7);
  EXPECT_EQ(c.trainer.runDir, "/tmp/the-launchers-run");
}

TEST_F(SessionConfig, AJobThisBalancenetDidNotWriteIsOneUsageError) {
  for (const std::string& job : {std::string("{\"format\": 1}"), std::string("not json"), std::string("")}) {
    launchedAs(0, 2, job);
    const auto message = usageErrorOf([] { sessionConfigFromEnvironment(""); });
    EXPECT_NE(message.find("not one this balancenet wrote"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace balancenet::python

// The launcher's decision after a death, case by case: elastic and federated jobs go on, a pipeline restarts,
// host 0 of an elastic multi-host job keeps serving the store, and bad input always stops the job (exit 2).
#include "balancenet/launch/AfterFailure.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

namespace balancenet::launch {
namespace {

Death exited(int code, int rank = 1) {
  Death d;
  d.exitCode = code;
  d.rank = rank;
  return d;
}

Death killed(int signal, int rank = 1) {
  Death d;
  d.signal = signal;
  d.rank = rank;
  return d;
}

JobShape elasticJob(int hosts = 1, int hostRank = 0, int minWorkers = 2) {
  JobShape job;
  job.elastic = true;
  job.hosts = hosts;
  job.hostRank = hostRank;
  job.minWorkers = minWorkers;
  return job;
}

TEST(AfterFailure, AnElasticJobGoesOnWhileMinWorkersRunOnOneHost) {
  EXPECT_EQ(afterFailure(elasticJob(), killed(SIGKILL), 2, 0, false), AfterFailure::GoOnWithout);
  EXPECT_EQ(afterFailure(elasticJob(), exited(1), 2, 0, false), AfterFailure::GoOnWithout);
  EXPECT_EQ(afterFailure(elasticJob(), killed(SIGKILL), 1, 0, false), AfterFailure::StopTheJob);  // below --min-workers
}

TEST(AfterFailure, OnSeveralHostsALauncherGoesOnWithOneWorkerOfItsOwnTheWorkersCountTheJobs) {
  EXPECT_EQ(afterFailure(elasticJob(3, 1, 5), killed(SIGKILL), 1, 0, false), AfterFailure::GoOnWithout);
  EXPECT_EQ(afterFailure(elasticJob(3, 1, 5), killed(SIGKILL), 0, 0, false), AfterFailure::StopTheJob);
  // Host 0 without workers of its own still serves the store the others re-form on.
  EXPECT_EQ(afterFailure(elasticJob(3, 0, 5), killed(SIGKILL), 0, 0, false), AfterFailure::ServeTheStoreAlone);
}

TEST(AfterFailure, BadInputStopsEveryJobWhateverItsShape) {
  JobShape pipeline;
  pipeline.pipeline = true;
  JobShape federated;
  federated.federated = true;
  for (const auto& job : {elasticJob(), elasticJob(3, 0, 1), pipeline, federated, JobShape{}}) {
    EXPECT_EQ(afterFailure(job, exited(2), 0, 3, false), AfterFailure::StopTheJob);
    EXPECT_EQ(afterFailure(job, exited(2), 8, 3, false), AfterFailure::StopTheJob);
  }
  EXPECT_EQ(stopExitCode(exited(2)), 2);
  EXPECT_EQ(stopExitCode(exited(1)), 1);
  EXPECT_EQ(stopExitCode(killed(SIGKILL)), 1);
  EXPECT_EQ(stopExitCode(killed(2)), 1);  // signal 2 (SIGINT) is not exit code 2
}

TEST(AfterFailure, APipelineRestartsWhileRestartsAreLeftAndTheJobHasNotFinished) {
  JobShape pipeline;
  pipeline.pipeline = true;
  EXPECT_EQ(afterFailure(pipeline, killed(SIGKILL), 3, 1, false), AfterFailure::RestartTheJob);
  EXPECT_EQ(afterFailure(pipeline, killed(SIGKILL), 3, 0, false), AfterFailure::StopTheJob);
  EXPECT_EQ(afterFailure(pipeline, killed(SIGKILL), 3, 1, true), AfterFailure::StopTheJob);
}

TEST(AfterFailure, AFederatedClientsDeathLeavesItOutTheServersEndsTheJob) {
  JobShape federated;
  federated.federated = true;
  EXPECT_EQ(afterFailure(federated, killed(SIGKILL, 3), 0, 0, false), AfterFailure::GoOnWithout);
  EXPECT_EQ(afterFailure(federated, exited(1, 0), 3, 0, false), AfterFailure::StopTheJob);
}

TEST(AfterFailure, AJobWithoutElasticStopsAtTheFirstDeath) {
  EXPECT_EQ(afterFailure(JobShape{}, exited(1), 7, 5, false), AfterFailure::StopTheJob);
}

TEST(AfterFailure, ADeathIsReadFromItsWaitStatus) {
  const Death byExit = Death::of(2 << 8, 4);  // what waitpid reports for exit(2)
  EXPECT_EQ(byExit.exitCode, 2);
  EXPECT_EQ(byExit.signal, 0);
  EXPECT_EQ(byExit.rank, 4);
  EXPECT_TRUE(byExit.badInput());
  const Death bySignal = Death::of(SIGKILL, 0);  // killed by SIGKILL, no core
  ASSERT_TRUE(WIFSIGNALED(SIGKILL));
  EXPECT_EQ(bySignal.signal, SIGKILL);
  EXPECT_FALSE(bySignal.badInput());
}

}  // namespace
}  // namespace balancenet::launch

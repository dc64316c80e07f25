// How a job's processes reach its store, from one JobConfig: who hosts it, which rank and world each announces,
// and which timeout a collective waits for.
#include "balancenet/job/JobRendezvous.h"

#include <gtest/gtest.h>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::job {
namespace {

JobConfig workerConfig(int rank, int worldSize) {
  JobConfig c;
  c.launch.masterAddr = "10.0.0.1";
  c.launch.masterPort = 29511;
  c.launch.jobToken = "secret";
  c.worker = WorkerIdentity{};
  c.worker->rank = rank;
  c.worker->worldSize = worldSize;
  return c;
}

TEST(JobRendezvous, RankZeroStartedWithoutALauncherHostsTheStoreAndNoOtherDoes) {
  const auto zero = rendezvousOptions(workerConfig(0, 3));
  EXPECT_TRUE(zero.hostStore);
  EXPECT_EQ(zero.rank, 0);
  EXPECT_EQ(zero.worldSize, 3);
  EXPECT_EQ(zero.masterAddr, "10.0.0.1");
  EXPECT_EQ(zero.masterPort, 29511);
  EXPECT_EQ(zero.jobToken, "secret");
  EXPECT_FALSE(rendezvousOptions(workerConfig(2, 3)).hostStore);

  auto launched = workerConfig(0, 3);
  launched.worker->storeHostedByLauncher = true;
  EXPECT_FALSE(rendezvousOptions(launched).hostStore);  // its launcher serves the store
  auto joining = workerConfig(0, 3);
  joining.worker->joining = true;
  EXPECT_FALSE(rendezvousOptions(joining).hostStore);  // a restarted rank 0 rejoins the store that is there
}

TEST(JobRendezvous, ANewJoinerAnnouncesRankZeroUntilTheStoreGivesItAnId) {
  auto c = workerConfig(-1, 3);
  c.worker->joining = true;
  const auto rv = rendezvousOptions(c);
  EXPECT_EQ(rv.rank, 0);
  EXPECT_FALSE(rv.hostStore);
}

TEST(JobRendezvous, ALauncherSeesTheWholeJobAndHostsNothing) {
  JobConfig c;
  c.launch.nnodes = 2;
  c.launch.nprocPerNode = 3;
  const auto rv = rendezvousOptions(c);
  EXPECT_EQ(rv.worldSize, 6);
  EXPECT_EQ(rv.rank, 0);
  EXPECT_FALSE(rv.hostStore);
  c.launch.hostWorkers = {3, 1};  // the hosts agreed on other counts
  EXPECT_EQ(rendezvousOptions(c).worldSize, 4);
}

TEST(JobRendezvous, CollectivesWaitForThePeerTimeoutUnderElasticElseTheStallTimeout) {
  auto c = workerConfig(1, 2);
  c.resilience.peerTimeout = std::chrono::milliseconds(1234);
  c.resilience.stallTimeout = std::chrono::milliseconds(5678);
  EXPECT_EQ(rendezvousOptions(c).collectiveTimeout, std::chrono::milliseconds(5678));
  c.resilience.elastic = true;
  EXPECT_EQ(rendezvousOptions(c).collectiveTimeout, std::chrono::milliseconds(1234));
}

TEST(JobRendezvous, GlooThreadsNeverExceedTheWorkersShareOfTheCpu) {
  auto c = workerConfig(1, 2);
  c.threads = 1;
  EXPECT_EQ(rendezvousOptions(c).glooThreads, 1);
  c.threads = 1000;
  EXPECT_EQ(rendezvousOptions(c).glooThreads, comm::kDefaultGlooThreads);
}

}  // namespace
}  // namespace balancenet::job

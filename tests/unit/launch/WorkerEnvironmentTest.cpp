// The environment a launcher gives its children: its own, minus any inherited identity, plus theirs.
#include "balancenet/launch/WorkerEnvironment.h"

#include <gtest/gtest.h>

#include <set>

namespace balancenet::launch {
using job::LaunchOptions;
namespace {

int count(const std::vector<std::string>& env, const std::string& name) {
  int n = 0;
  for (const auto& e : env) n += e.rfind(name + "=", 0) == 0;
  return n;
}

// A launcher started inside another job (torchrun, a batch system, a test harness) inherits that job's
// identity variables; a child that saw two values of one would take whichever its reader finds first.
TEST(WorkerEnvironment, InheritedIdentityIsReplacedNotDuplicated) {
  LaunchOptions launch;
  launch.nprocPerNode = 2;
  launch.storeFile = "/tmp/store";
  const std::vector<std::string> inherited{
      "RANK=5",           "WORLD_SIZE=8",      "LOCAL_RANK=3", "LOCAL_WORLD_SIZE=7",
      "MASTER_PORT=1234", "BALANCENET_JOIN=1", "PATH=/bin",    "BALANCENET_FAULT=1:2:kill"};
  const auto env = childEnvironment(inherited, launch, /*port=*/0, workerIdentity(launch, 1, 1, /*joining=*/false));
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"})
    EXPECT_EQ(count(env, name), 1) << name;
  const std::set<std::string> all(env.begin(), env.end());
  EXPECT_TRUE(all.count("RANK=1"));
  EXPECT_TRUE(all.count("WORLD_SIZE=2"));
  EXPECT_TRUE(all.count("LOCAL_WORLD_SIZE=2"));
  EXPECT_TRUE(all.count("BALANCENET_STORE_FILE=/tmp/store"));
  EXPECT_EQ(count(env, "MASTER_PORT"), 0) << "a file store has no port";
  EXPECT_EQ(count(env, "BALANCENET_JOIN"), 0) << "only a restarted worker joins";
  EXPECT_TRUE(all.count("PATH=/bin"));
  EXPECT_TRUE(all.count("BALANCENET_FAULT=1:2:kill")) << "not an identity: tests set it for the whole job";
}

TEST(WorkerEnvironment, RestartedWorkerJoinsAndServersHaveNoRank) {
  LaunchOptions launch;
  const auto worker = childEnvironment({}, launch, 29500, workerIdentity(launch, 0, 0, /*joining=*/true));
  EXPECT_EQ(count(worker, "BALANCENET_JOIN"), 1);
  EXPECT_EQ(count(worker, "MASTER_PORT"), 1);
  const auto server = childEnvironment({"RANK=3"}, launch, 29500, serverIdentity(2));
  EXPECT_EQ(count(server, "RANK"), 0);
  EXPECT_EQ(count(server, "BALANCENET_PS_SERVER"), 1);
}

TEST(EnvironmentVariables, EachIsNamedOnceWithItsMeaning) {
  std::set<std::string> names;
  for (const auto& v : environmentVariables()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_GT(std::string(v.meaning).size(), 10u) << v.name;
  }
}

}  // namespace
}  // namespace balancenet::launch

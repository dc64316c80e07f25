// The environment a launcher gives its children: its own, minus any inherited identity, plus theirs.
#include "balancenet/launch/WorkerEnvironment.h"

#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

#include <map>
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

namespace balancenet::launch {
namespace {

schedulers::Environment fakeEnvironment(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

const job::SettingSource* sourceOf(const LaunchOptions& launch, const std::string& setting) {
  for (const auto& s : launch.sources)
    if (s.setting == setting) return &s;
  return nullptr;
}

const std::map<std::string, std::string> kSrunTask{{"SLURM_JOB_ID", "42"},
                                                   {"SLURM_STEP_ID", "0"},
                                                   {"SLURM_PROCID", "3"},
                                                   {"SLURM_LOCALID", "1"},
                                                   {"SLURM_NODEID", "1"},
                                                   {"SLURM_STEP_NUM_TASKS", "4"},
                                                   {"SLURM_STEP_NUM_NODES", "2"},
                                                   {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
                                                   {"SLURM_STEP_NODELIST", "cn[07-08]"}};

TEST(WorkerEnvironment, SrunTaskIsAWorkerWhoseStoreIsOnTheStepsFirstHost) {
  LaunchOptions launch;
  const auto id = readWorkerEnvironment(launch, fakeEnvironment(kSrunTask));
  ASSERT_TRUE(id);
  EXPECT_EQ(id->rank, 3);
  EXPECT_EQ(id->worldSize, 4);
  EXPECT_EQ(id->localRank, 1);
  EXPECT_EQ(id->localWorldSize, 2);
  EXPECT_FALSE(id->storeHostedByLauncher) << "rank 0 serves the store itself";
  EXPECT_EQ(launch.scheduler, "slurm");
  EXPECT_EQ(launch.masterAddr, "cn07");
  EXPECT_EQ(launch.masterPort, 20042);
  ASSERT_TRUE(sourceOf(launch, "rank"));
  EXPECT_EQ(sourceOf(launch, "rank")->from, "SLURM_PROCID");
  const std::string comment = launchSourcesComment(launch);
  EXPECT_NE(comment.find("#   master_addr: cn07  (first host of SLURM_STEP_NODELIST=cn[07-08])"), std::string::npos)
      << comment;
  EXPECT_NE(comment.find("slurm's variables"), std::string::npos) << comment;
}

// MASTER_ADDR and MASTER_PORT win over the flags, and the flags over what the scheduler implies.
TEST(WorkerEnvironment, StoreAddressPrecedence) {
  LaunchOptions flagged;
  flagged.masterAddr = "head.example.org";
  flagged.masterPort = 31000;
  readWorkerEnvironment(flagged, fakeEnvironment(kSrunTask));
  EXPECT_EQ(flagged.masterAddr, "head.example.org");
  EXPECT_EQ(flagged.masterPort, 31000);
  EXPECT_FALSE(sourceOf(flagged, "master_addr")) << "a flag is not read from the environment";

  auto vars = kSrunTask;
  vars["MASTER_ADDR"] = "10.1.2.3";
  vars["MASTER_PORT"] = "32000";
  LaunchOptions both = flagged;
  readWorkerEnvironment(both, fakeEnvironment(vars));
  EXPECT_EQ(both.masterAddr, "10.1.2.3");
  EXPECT_EQ(both.masterPort, 32000);
  EXPECT_EQ(sourceOf(both, "master_port")->from, "MASTER_PORT");
}

TEST(WorkerEnvironment, KubernetesPodLaunchesItsHost) {
  LaunchOptions launch;
  launch.nnodes = 3;
  const auto id = readWorkerEnvironment(
      launch, fakeEnvironment({{"JOB_COMPLETION_INDEX", "1"}, {"HOSTNAME", "bn-1"}, {"BALANCENET_K8S_SERVICE", "bn"}}));
  EXPECT_FALSE(id) << "a pod is a host's launcher, not a worker";
  EXPECT_EQ(launch.nodeRank, 1);
  EXPECT_EQ(launch.masterAddr, "bn-0.bn");
  EXPECT_EQ(launch.masterPort, 29500);
  LaunchOptions disagreeing;
  disagreeing.nnodes = 3;
  disagreeing.nodeRank = 2;
  EXPECT_THROW(readWorkerEnvironment(disagreeing, fakeEnvironment({{"JOB_COMPLETION_INDEX", "1"}})), UsageError);
  LaunchOptions unnamed;
  unnamed.nnodes = 3;
  EXPECT_THROW(readWorkerEnvironment(unnamed, fakeEnvironment({{"JOB_COMPLETION_INDEX", "1"}})), UsageError)
      << "several pods and no service: nobody can name pod 0";
}

TEST(WorkerEnvironment, TorchrunWorkerStillNeedsItsPort) {
  LaunchOptions launch;
  EXPECT_THROW(readWorkerEnvironment(launch, fakeEnvironment({{"RANK", "0"}, {"WORLD_SIZE", "2"}})), UsageError);
  LaunchOptions plain;
  EXPECT_FALSE(readWorkerEnvironment(plain, fakeEnvironment({})));
  EXPECT_TRUE(launchSourcesComment(plain).empty());
}

}  // namespace
}  // namespace balancenet::launch

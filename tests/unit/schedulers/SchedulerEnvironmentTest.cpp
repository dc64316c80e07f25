// Each launcher's variables as it really sets them, and the one precedence rule among them.
#include "balancenet/schedulers/SchedulerEnvironment.h"

#include <gtest/gtest.h>

#include <map>

#include "balancenet/core/Error.h"

namespace balancenet::schedulers {
namespace {

using Vars = std::map<std::string, std::string>;

Environment fake(const Vars& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

// What srun gives task 5 of `srun -N 3 -n 7` (3+2+2 tasks) on the second node of node[01-03].
Vars slurmTask() {
  return {{"SLURM_JOB_ID", "123456"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", "5"},
          {"SLURM_LOCALID", "1"},
          {"SLURM_NODEID", "2"},
          {"SLURM_NTASKS", "7"},
          {"SLURM_STEP_NUM_TASKS", "7"},
          {"SLURM_STEP_NUM_NODES", "3"},
          {"SLURM_STEP_TASKS_PER_NODE", "3,2(x2)"},
          {"SLURM_STEP_NODELIST", "node[01-03]"},
          {"SLURM_JOB_NODELIST", "node[01-04]"}};
}

TEST(SchedulerEnvironment, NothingSetIsAPlainShell) { EXPECT_FALSE(readSchedulerEnvironment(fake({}))); }

TEST(SchedulerEnvironment, SlurmTaskOfAStep) {
  const auto r = readSchedulerEnvironment(fake(slurmTask()));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->scheduler, "slurm");
  EXPECT_EQ(r->rank->value, 5);
  EXPECT_EQ(r->rank->from, "SLURM_PROCID");
  EXPECT_EQ(r->worldSize->value, 7);
  EXPECT_EQ(r->worldSize->from, "SLURM_STEP_NUM_TASKS");
  EXPECT_EQ(r->localRank->value, 1);
  EXPECT_EQ(r->localWorldSize->value, 2) << "node 2 runs the last of 3,2,2";
  EXPECT_EQ(r->masterAddr->value, "node01") << "the step's first host, not the job's";
  EXPECT_NE(r->masterAddr->from.find("SLURM_STEP_NODELIST"), std::string::npos);
  EXPECT_EQ(r->masterPort->value, 20000 + 123456 % 10000);
  EXPECT_FALSE(r->nodeRank);
}

TEST(SchedulerEnvironment, SlurmStepOnOneNodeUsesLoopback) {
  Vars v = slurmTask();
  v["SLURM_STEP_NUM_NODES"] = "1";
  v["SLURM_STEP_TASKS_PER_NODE"] = "7";
  v["SLURM_NODEID"] = "0";
  v["SLURM_STEP_NODELIST"] = "node01";
  const auto r = readSchedulerEnvironment(fake(v));
  EXPECT_EQ(r->masterAddr->value, "127.0.0.1");
  EXPECT_EQ(r->localWorldSize->value, 7);
}

TEST(SchedulerEnvironment, SlurmFallsBackToTheJobsVariables) {
  Vars v = slurmTask();
  for (const char* name :
       {"SLURM_STEP_NUM_TASKS", "SLURM_STEP_NUM_NODES", "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NODELIST"})
    v.erase(name);
  v["SLURM_NNODES"] = "4";
  const auto r = readSchedulerEnvironment(fake(v));
  EXPECT_EQ(r->worldSize->from, "SLURM_NTASKS");
  EXPECT_EQ(r->masterAddr->value, "node01");
  EXPECT_FALSE(r->localWorldSize) << "no per-node counts: the worker's threads fall back to its own flags";
}

TEST(SchedulerEnvironment, ASlurmBatchScriptIsNotATask) {
  Vars v = slurmTask();
  v.erase("SLURM_STEP_ID");
  EXPECT_FALSE(readSchedulerEnvironment(fake(v))) << "the batch shell launches; its srun tasks are the workers";
}

TEST(SchedulerEnvironment, SlurmInconsistenciesAreErrors) {
  Vars v = slurmTask();
  v["SLURM_PROCID"] = "7";
  EXPECT_THROW(readSchedulerEnvironment(fake(v)), UsageError) << "rank out of range";
  v = slurmTask();
  v["SLURM_STEP_NODELIST"] = "node[01-";
  EXPECT_THROW(readSchedulerEnvironment(fake(v)), UsageError) << "malformed node list";
  v = slurmTask();
  v["SLURM_NODEID"] = "3";
  EXPECT_THROW(readSchedulerEnvironment(fake(v)), UsageError) << "a node beyond the step's";
  v = slurmTask();
  v["SLURM_LOCALID"] = "2";
  EXPECT_THROW(readSchedulerEnvironment(fake(v)), UsageError) << "local id beyond the node's tasks";
}

TEST(SchedulerEnvironment, OpenMpiOnOneHostAndAcrossHosts) {
  Vars v{{"OMPI_COMM_WORLD_RANK", "2"},
         {"OMPI_COMM_WORLD_SIZE", "4"},
         {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
         {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}};
  auto r = readSchedulerEnvironment(fake(v));
  EXPECT_EQ(r->scheduler, "openmpi");
  EXPECT_EQ(r->rank->value, 2);
  EXPECT_EQ(r->masterAddr->value, "127.0.0.1");
  EXPECT_EQ(r->masterPort->value, 29500);
  v["OMPI_COMM_WORLD_LOCAL_SIZE"] = "2";
  v["OMPI_COMM_WORLD_LOCAL_RANK"] = "0";
  r = readSchedulerEnvironment(fake(v));
  EXPECT_FALSE(r->masterAddr) << "mpirun does not say where rank 0 runs";
  EXPECT_NE(r->masterHint.find("mpirun -x MASTER_ADDR"), std::string::npos) << r->masterHint;
}

TEST(SchedulerEnvironment, MpichHydra) {
  const auto r = readSchedulerEnvironment(
      fake({{"PMI_RANK", "1"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "3"}}));
  EXPECT_EQ(r->scheduler, "mpich");
  EXPECT_EQ(r->rank->value, 1);
  EXPECT_EQ(r->worldSize->value, 3);
  EXPECT_EQ(r->localWorldSize->value, 3);
  EXPECT_EQ(r->masterAddr->value, "127.0.0.1");
  EXPECT_THROW(readSchedulerEnvironment(fake({{"PMI_RANK", "1"}})), UsageError) << "a rank without a size";
}

TEST(SchedulerEnvironment, KubernetesPodIsAHostOfTheJob) {
  const auto r = readSchedulerEnvironment(
      fake({{"JOB_COMPLETION_INDEX", "2"}, {"HOSTNAME", "train-job-2"}, {"BALANCENET_K8S_SERVICE", "train-svc"}}));
  EXPECT_EQ(r->scheduler, "kubernetes");
  EXPECT_EQ(r->nodeRank->value, 2);
  EXPECT_FALSE(r->rank) << "a pod launches its host's workers";
  EXPECT_EQ(r->masterAddr->value, "train-job-0.train-svc");
  EXPECT_THROW(readSchedulerEnvironment(
                   fake({{"JOB_COMPLETION_INDEX", "2"}, {"HOSTNAME", "elsewhere"}, {"BALANCENET_K8S_SERVICE", "svc"}})),
               UsageError);
  EXPECT_FALSE(readSchedulerEnvironment(fake({{"JOB_COMPLETION_INDEX", "0"}}))->masterAddr);
}

// The innermost launcher wins: torchrun inside srun, mpirun inside a Slurm allocation, anything inside a pod.
TEST(SchedulerEnvironment, InnermostLauncherWins) {
  Vars v = slurmTask();
  v["JOB_COMPLETION_INDEX"] = "0";
  v["OMPI_COMM_WORLD_RANK"] = "1";
  v["OMPI_COMM_WORLD_SIZE"] = "2";
  EXPECT_EQ(readSchedulerEnvironment(fake(v))->scheduler, "openmpi");
  v["RANK"] = "0";
  v["WORLD_SIZE"] = "8";
  const auto r = readSchedulerEnvironment(fake(v));
  EXPECT_EQ(r->scheduler, "torchrun");
  EXPECT_EQ(r->worldSize->value, 8);
  EXPECT_EQ(schedulerPrecedence(), (std::vector<std::string>{"torchrun", "openmpi", "mpich", "slurm", "kubernetes"}));
}

}  // namespace
}  // namespace balancenet::schedulers

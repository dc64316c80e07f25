// A Slurm step's variables (srun). The store is on the step's first host, where srun places task 0 under its
// block and cyclic distributions; MASTER_ADDR overrides it for any other.
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/schedulers/HostList.h"
#include "balancenet/schedulers/Launchers.h"

namespace balancenet::schedulers {
namespace {

// Ports 20000-29999, one per job id: steps of different jobs sharing a node do not collide (two steps of one job
// running at once need MASTER_PORT).
constexpr int kPortBase = 20000;
constexpr int kPortSpan = 10000;

std::string firstOf(const Environment& env, std::initializer_list<const char*> names, const char** found) {
  for (const char* name : names)
    if (auto v = env(name)) {
      *found = name;
      return *v;
    }
  *found = nullptr;
  return {};
}

}  // namespace

std::optional<SchedulerReading> readSlurm(const Environment& env) {
  // srun sets SLURM_STEP_ID on each task; a batch script has SLURM_PROCID too but is one shell, not a task.
  if (!env("SLURM_PROCID") || !(env("SLURM_STEP_ID") || env("SLURM_STEPID"))) return std::nullopt;
  const char* worldVar = nullptr;
  firstOf(env, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, &worldVar);
  if (!worldVar) throw UsageError("SLURM_PROCID is set but neither SLURM_STEP_NUM_TASKS nor SLURM_NTASKS is");
  const char* localVar = env("SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : nullptr;
  SchedulerReading r = *readWorkerVariables(env, {"slurm", "SLURM_PROCID", worldVar, "SLURM_LOCALID", nullptr});

  if (localVar) {
    const auto perNode = expandTasksPerNode(*env(localVar), localVar);
    const auto node = readInteger(env, "SLURM_NODEID", 0, static_cast<int>(perNode.size()) - 1);
    if (!node) throw UsageError(fmt::format("{} is set but SLURM_NODEID is not", localVar));
    r.localWorldSize = Sourced<int>{perNode[node->value],
                                    fmt::format("{}={} at SLURM_NODEID={}", localVar, *env(localVar), node->value)};
    if (r.localRank && r.localRank->value >= r.localWorldSize->value)
      throw UsageError(fmt::format("SLURM_LOCALID={} is not below this node's {} tasks ({})", r.localRank->value,
                                   r.localWorldSize->value, r.localWorldSize->from));
  }

  const auto nodes =
      readInteger(env, env("SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES", 1, 1 << 20);
  const char* listVar = nullptr;
  const std::string list = firstOf(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}, &listVar);
  if (nodes && nodes->value == 1) {
    r.masterAddr = Sourced<std::string>{"127.0.0.1", fmt::format("the step runs on one node ({}=1)", nodes->from)};
  } else if (listVar) {
    // Expanded even when one host would do: a malformed list is an error here, not a wrong address later.
    r.masterAddr =
        Sourced<std::string>{expandHostList(list, listVar).front(), fmt::format("first host of {}={}", listVar, list)};
  } else {
    r.masterHint = "the Slurm step names no node list (SLURM_STEP_NODELIST): set MASTER_ADDR to task 0's host";
  }
  if (auto job = readInteger(env, "SLURM_JOB_ID", 0, 2147483647))
    r.masterPort = Sourced<int>{kPortBase + job->value % kPortSpan,
                                fmt::format("{} + SLURM_JOB_ID={} % {}", kPortBase, job->value, kPortSpan)};
  return r;
}

}  // namespace balancenet::schedulers

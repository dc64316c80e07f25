// Reading who a process is from its launcher's environment (schedulers/), with the store's address; and writing
// torchrun's variables for the workers balancenet's own launcher starts.
#include "balancenet/launch/WorkerEnvironment.h"

#include <string>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/schedulers/SchedulerEnvironment.h"

namespace balancenet::launch {
using job::LaunchOptions;
using job::WorkerIdentity;
using schedulers::Environment;
using schedulers::SchedulerReading;
namespace {

// LaunchOptions' own default: --master-addr was not given.
const std::string kDefaultMasterAddr = LaunchOptions{}.masterAddr;

void note(LaunchOptions& launch, const std::string& setting, const std::string& value, const std::string& from) {
  launch.sources.push_back({setting, value, from});
}

// The store's address: MASTER_ADDR and MASTER_PORT, then the flags, then what the launcher's own variables imply.
void readStoreAddress(LaunchOptions& launch, const Environment& env, const std::optional<SchedulerReading>& r) {
  if (auto addr = env(kMasterAddrVar)) {
    launch.masterAddr = *addr;
    note(launch, "master_addr", *addr, kMasterAddrVar);
  } else if (launch.masterAddr == kDefaultMasterAddr && r && r->masterAddr) {
    launch.masterAddr = r->masterAddr->value;
    note(launch, "master_addr", r->masterAddr->value, r->masterAddr->from);
  } else if (launch.masterAddr == kDefaultMasterAddr && r && !r->masterHint.empty() &&
             (!r->nodeRank || launch.nnodes > 1)) {
    throw UsageError(r->masterHint);
  }
  if (auto port = env(kMasterPortVar)) {
    launch.masterPort = schedulers::environmentInteger(kMasterPortVar, *port, 1, 65535);
    note(launch, "master_port", *port, kMasterPortVar);
  } else if (launch.masterPort == 0 && r && r->masterPort) {
    launch.masterPort = r->masterPort->value;
    note(launch, "master_port", std::to_string(r->masterPort->value), r->masterPort->from);
  }
}

// A pod of an Indexed Job is one host of a multi-host job: it launches that host's workers itself.
void readNodeRank(LaunchOptions& launch, const schedulers::Sourced<int>& index) {
  if (launch.nodeRank != 0 && launch.nodeRank != index.value)
    throw UsageError(fmt::format("--node-rank {} disagrees with {}={}: give neither or the same", launch.nodeRank,
                                 index.from, index.value));
  if (index.value >= launch.nnodes)
    throw UsageError(fmt::format("{}={} is not below --nnodes {}: the Job's completions and --nnodes must agree",
                                 index.from, index.value, launch.nnodes));
  launch.nodeRank = index.value;
  note(launch, "node_rank", std::to_string(index.value), index.from);
}

WorkerIdentity identityOf(LaunchOptions& launch, const SchedulerReading& r, const Environment& env) {
  WorkerIdentity id;
  id.worldSize = r.worldSize->value;
  id.rank = r.rank->value;
  note(launch, "world_size", std::to_string(id.worldSize), r.worldSize->from);
  note(launch, "rank", std::to_string(id.rank), r.rank->from);
  if (r.localRank) {
    id.localRank = r.localRank->value;
    note(launch, "local_rank", std::to_string(id.localRank), r.localRank->from);
  }
  if (r.localWorldSize) {
    id.localWorldSize = r.localWorldSize->value;
    note(launch, "local_world_size", std::to_string(id.localWorldSize), r.localWorldSize->from);
  }
  // balancenet's own launcher's variables, on the workers it started.
  id.storeHostedByLauncher = env(kStoreHostedVar).value_or("0") == "1";
  id.joining = env(kJoinVar).value_or("0") == "1";
  if (auto attempt = env(kAttemptVar)) id.attempt = schedulers::environmentInteger(kAttemptVar, *attempt, 0, 1 << 20);
  return id;
}

}  // namespace

std::optional<WorkerIdentity> readWorkerEnvironment(LaunchOptions& launch) {
  return readWorkerEnvironment(launch, schedulers::processEnvironment());
}

std::optional<WorkerIdentity> readWorkerEnvironment(LaunchOptions& launch, const Environment& env) {
  launch.sources.clear();
  if (auto file = env(kStoreFileVar)) launch.storeFile = *file;
  if (launch.jobToken.empty()) launch.jobToken = jobTokenFromEnvironment(env).value_or("");
  const auto reading = schedulers::readSchedulerEnvironment(env);
  readStoreAddress(launch, env, reading);
  if (!reading) return std::nullopt;
  launch.scheduler = reading->scheduler;
  if (reading->nodeRank) {
    readNodeRank(launch, *reading->nodeRank);
    return std::nullopt;
  }
  if (launch.masterPort == 0 && launch.storeFile.empty())
    throw UsageError(
        fmt::format("{} is set but MASTER_PORT is not: workers need the store's port", reading->rank->from));
  return identityOf(launch, *reading, env);
}

std::string launchSourcesComment(const LaunchOptions& launch) {
  if (launch.sources.empty()) return {};
  std::string text = fmt::format("# Read from the environment ({}), not flags:\n",
                                 launch.scheduler.empty() ? "no launcher" : launch.scheduler + "'s variables");
  for (const auto& s : launch.sources) text += fmt::format("#   {}: {}  ({})\n", s.setting, s.value, s.from);
  return text;
}

std::optional<std::string> jobTokenFromEnvironment() {
  return jobTokenFromEnvironment(schedulers::processEnvironment());
}

std::optional<std::string> jobTokenFromEnvironment(const Environment& env) {
  auto token = env(kJobTokenVar);
  // An empty variable is more likely `export BALANCENET_JOB_TOKEN=$UNSET` than a wish for an open job.
  if (token && token->empty()) throw UsageError(fmt::format("environment variable {} is set but empty", kJobTokenVar));
  return token;
}

std::optional<int> readServerEnvironment() {
  const auto env = schedulers::processEnvironment();
  auto index = env(kServerVar);
  if (!index) return std::nullopt;
  if (!env(kMasterPortVar) && !env(kStoreFileVar))
    throw UsageError(fmt::format("{} is set but MASTER_PORT is not", kServerVar));
  return schedulers::environmentInteger(kServerVar, *index, 0, 1 << 20);
}

std::vector<std::string> childEnvironment(const std::vector<std::string>& inherited, const LaunchOptions& launch,
                                          int port, const std::vector<std::string>& identity) {
  std::vector<std::string> env = withoutIdentityVariables(inherited);
  env.push_back(fmt::format("{}={}", kMasterAddrVar, launch.masterAddr));
  if (port != 0) env.push_back(fmt::format("{}={}", kMasterPortVar, port));
  env.push_back(fmt::format("{}=1", kStoreHostedVar));
  if (!launch.storeFile.empty()) env.push_back(fmt::format("{}={}", kStoreFileVar, launch.storeFile));
  // In the environment, not on the command line, where every user of the machine could read it.
  if (!launch.jobToken.empty()) env.push_back(fmt::format("{}={}", kJobTokenVar, launch.jobToken));
  env.insert(env.end(), identity.begin(), identity.end());
  return env;
}

std::vector<std::string> workerIdentity(const LaunchOptions& launch, int rank, int localRank, bool joining) {
  std::vector<std::string> env{
      fmt::format("{}={}", kRankVar, rank), fmt::format("{}={}", kWorldSizeVar, launch.worldSize()),
      fmt::format("{}={}", kLocalRankVar, localRank), fmt::format("{}={}", kLocalWorldSizeVar, launch.nprocPerNode)};
  if (joining) env.push_back(fmt::format("{}=1", kJoinVar));
  return env;
}

std::vector<std::string> serverIdentity(int server) { return {fmt::format("{}={}", kServerVar, server)}; }

}  // namespace balancenet::launch

// Parsing torchrun-style environment variables, with one-line errors for malformed values; and writing them.
#include "balancenet/launch/WorkerEnvironment.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::launch {
using job::LaunchOptions;
using job::WorkerIdentity;
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// The whole value, digits only (parseInteger, as std::stoll, would take " 4" and "+4").
int envInt(const char* name, const std::string& value, int min, int max) {
  const bool digitFirst = !value.empty() && std::isdigit(static_cast<unsigned char>(value.front()));
  const auto v = digitFirst ? parseInteger<int>(value) : std::nullopt;
  if (!v || *v < min || *v > max)
    throw UsageError(fmt::format("environment variable {}='{}' must be an integer in [{}, {}]", name, value, min, max));
  return *v;
}

}  // namespace

std::optional<WorkerIdentity> readWorkerEnvironment(LaunchOptions& launch) {
  if (auto addr = env(kMasterAddrVar)) launch.masterAddr = *addr;
  if (auto port = env(kMasterPortVar)) launch.masterPort = envInt(kMasterPortVar, *port, 1, 65535);
  if (auto file = env(kStoreFileVar)) launch.storeFile = *file;
  if (launch.jobToken.empty()) launch.jobToken = jobTokenFromEnvironment().value_or("");
  auto rank = env(kRankVar);
  if (!rank) return std::nullopt;
  auto world = env(kWorldSizeVar);
  if (!world) throw UsageError("RANK is set but WORLD_SIZE is not; set both (or neither, to launch workers)");
  WorkerIdentity id;
  id.worldSize = envInt(kWorldSizeVar, *world, 1, 1 << 20);
  id.rank = envInt(kRankVar, *rank, 0, id.worldSize - 1);
  if (auto local = env(kLocalRankVar)) id.localRank = envInt(kLocalRankVar, *local, 0, 1 << 20);
  if (auto local = env(kLocalWorldSizeVar)) id.localWorldSize = envInt(kLocalWorldSizeVar, *local, 1, 1 << 20);
  id.storeHostedByLauncher = env(kStoreHostedVar).value_or("0") == "1";
  id.joining = env(kJoinVar).value_or("0") == "1";
  if (auto attempt = env(kAttemptVar)) id.attempt = envInt(kAttemptVar, *attempt, 0, 1 << 20);
  if (!env(kMasterPortVar) && launch.storeFile.empty())
    throw UsageError("RANK is set but MASTER_PORT is not: workers need the store's port");
  return id;
}

std::optional<std::string> jobTokenFromEnvironment() {
  auto token = env(kJobTokenVar);
  // An empty variable is more likely `export BALANCENET_JOB_TOKEN=$UNSET` than a wish for an open job.
  if (token && token->empty()) throw UsageError(fmt::format("environment variable {} is set but empty", kJobTokenVar));
  return token;
}

std::optional<int> readServerEnvironment() {
  auto index = env(kServerVar);
  if (!index) return std::nullopt;
  if (!env(kMasterPortVar) && !env(kStoreFileVar))
    throw UsageError(fmt::format("{} is set but MASTER_PORT is not", kServerVar));
  return envInt(kServerVar, *index, 0, 1 << 20);
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

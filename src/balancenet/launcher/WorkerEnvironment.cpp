// Parsing torchrun-style environment variables, with one-line errors for malformed values.
#include "balancenet/launcher/WorkerEnvironment.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::launcher {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

int envInt(const char* name, const std::string& value, int min, int max) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || v < min || v > max)
    throw UsageError(fmt::format("environment variable {}='{}' must be an integer in [{}, {}]", name, value, min, max));
  return v;
}

}  // namespace

std::optional<WorkerIdentity> readWorkerEnvironment(LaunchOptions& launch) {
  if (auto addr = env("MASTER_ADDR")) launch.masterAddr = *addr;
  if (auto port = env("MASTER_PORT")) launch.masterPort = envInt("MASTER_PORT", *port, 1, 65535);
  if (auto file = env(kStoreFileVar)) launch.storeFile = *file;
  if (auto token = env(kJobTokenVar); token && launch.jobToken.empty()) {
    // An empty variable is more likely `export BALANCENET_JOB_TOKEN=$UNSET` than a wish for an open job.
    if (token->empty()) throw UsageError(fmt::format("environment variable {} is set but empty", kJobTokenVar));
    launch.jobToken = *token;
  }
  auto rank = env("RANK");
  if (!rank) return std::nullopt;
  auto world = env("WORLD_SIZE");
  if (!world) throw UsageError("RANK is set but WORLD_SIZE is not; set both (or neither, to launch workers)");
  WorkerIdentity id;
  id.worldSize = envInt("WORLD_SIZE", *world, 1, 1 << 20);
  id.rank = envInt("RANK", *rank, 0, id.worldSize - 1);
  if (auto local = env("LOCAL_RANK")) id.localRank = envInt("LOCAL_RANK", *local, 0, 1 << 20);
  id.storeHostedByLauncher = env(kStoreHostedVar).value_or("0") == "1";
  id.joining = env(kJoinVar).value_or("0") == "1";
  if (!env("MASTER_PORT") && launch.storeFile.empty())
    throw UsageError("RANK is set but MASTER_PORT is not: workers need the store's port");
  return id;
}

std::optional<int> readServerEnvironment() {
  auto index = env(kServerVar);
  if (!index) return std::nullopt;
  if (!env("MASTER_PORT") && !env(kStoreFileVar))
    throw UsageError(fmt::format("{} is set but MASTER_PORT is not", kServerVar));
  return envInt(kServerVar, *index, 0, 1 << 20);
}

}  // namespace balancenet::launcher

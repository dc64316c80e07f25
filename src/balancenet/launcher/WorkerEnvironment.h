// WorkerEnvironment: the one place that reads torchrun's environment variables.
#pragma once
#include <optional>

#include "balancenet/launcher/JobConfig.h"

namespace balancenet::launcher {

constexpr const char* kStoreHostedVar = "BALANCENET_STORE_HOSTED";
constexpr const char* kJoinVar = "BALANCENET_JOIN";  // the launcher sets it on a restarted worker
constexpr const char* kServerVar = "BALANCENET_PS_SERVER";  // the launcher sets it on parameter servers
constexpr const char* kStoreFileVar = "BALANCENET_STORE_FILE";  // a single-machine launcher's private store
constexpr const char* kJobTokenVar = "BALANCENET_JOB_TOKEN";  // the job token, kept off command lines

// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. Returns nothing when RANK is unset;
// fills launch.masterAddr/masterPort/storeFile from the environment when they are set there, and
// launch.jobToken from BALANCENET_JOB_TOKEN unless --job-token gave one.
std::optional<WorkerIdentity> readWorkerEnvironment(LaunchOptions& launch);

// The parameter server index this process was started as (BALANCENET_PS_SERVER), if any.
std::optional<int> readServerEnvironment();

}  // namespace balancenet::launcher

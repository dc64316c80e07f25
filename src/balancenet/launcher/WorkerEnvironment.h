// WorkerEnvironment: the one place that reads torchrun's environment variables.
#pragma once
#include <optional>

#include "balancenet/launcher/JobConfig.h"

namespace balancenet::launcher {

constexpr const char* kStoreHostedVar = "BALANCENET_STORE_HOSTED";

// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. Returns nothing when RANK is unset;
// fills launch.masterAddr/masterPort from the environment when they are set there.
std::optional<WorkerIdentity> readWorkerEnvironment(LaunchOptions& launch);

}  // namespace balancenet::launcher

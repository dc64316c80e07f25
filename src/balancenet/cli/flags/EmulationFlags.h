// EmulationFlags: heterogeneity emulated on one machine: --slowdown, --node-speed and their schedules,
// --net-delay-ms, --net-bandwidth-mbps, one value per process. Train, launch and federate share them.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"

namespace balancenet::cli {

// The group's values as given, before validateEmulation parses them into config.emulation.
struct EmulationRaw {
  std::string slowdown, slowdownSchedule, nodeSpeed, speedSchedule, netDelayMs, netBandwidthMbps;
};

// Declares the group on `app`, into `raw`.
void addEmulationFlags(CLI::App& app, EmulationRaw& raw);

// The lists parsed into config.emulation, one value for each of `world` processes (federate: each client).
// UsageError naming the flag.
void validateEmulation(job::JobConfig& config, const EmulationRaw& raw, int world);

}  // namespace balancenet::cli

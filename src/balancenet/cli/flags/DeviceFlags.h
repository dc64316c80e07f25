// DeviceFlags: where the workers compute (--device, --devices) and what sums GPU gradients (--backend), into
// config.device (device/DeviceOptions.h). Train declares them.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"

namespace balancenet::cli {

// The group's values as given, before validateDevices converts them into config.device.
struct DeviceRaw {
  std::string devices;  // --devices, comma separated (a list the way --split is one, so a config file's [a, b] reads)
};

void addDeviceFlags(CLI::App& app, job::JobConfig& config, DeviceRaw& raw);

// After the hosts are validated: the flags' own checks (device/DeviceChoice.h), a GPU asked for on a host without
// one, and ways of training that do not run on GPUs yet (whyNotOnGpu), which --device cuda refuses and auto
// settles on the CPU for. UsageError naming the flag.
void validateDevices(job::JobConfig& config, const DeviceRaw& raw);

// Why the job's way of training cannot run on GPU workers yet; empty: it can.
std::string whyNotOnGpu(const job::JobConfig& config);

}  // namespace balancenet::cli

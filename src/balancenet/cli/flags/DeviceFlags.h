// DeviceFlags: where the workers compute (--device, --devices) and what sums GPU gradients (--backend), into
// config.device (device/DeviceOptions.h). Train declares them.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/device/DeviceOptions.h"

namespace balancenet::cli {

// The group's values as given, before validateDevices converts them into config.device.
struct DeviceRaw {
  std::string device = "auto";
  std::string devices;  // --devices, comma separated (a list the way --split is one, so a config file's [a, b] reads)
  std::string backend = "auto";
};

void addDeviceFlags(CLI::App& app, DeviceRaw& raw);

// The flags as given, --devices' list split at its commas.
device::DeviceOptions givenDevices(const DeviceRaw& raw);
// The devices the workers get: `given`, except that where the job's way of training cannot run on GPU workers yet
// (`whyNotOnGpu` not empty) --device auto settles on the CPU and one that needs a GPU is refused (UsageError naming
// why). A pure function of its arguments.
device::DeviceOptions settleDevices(const device::DeviceOptions& given, const std::string& whyNotOnGpu);

// After the hosts are validated: the flags' own checks (device/DeviceChoice.h), a GPU asked for on a host without
// one, and ways of training that do not run on GPUs yet (whyNotOnGpu), which --device cuda refuses and auto
// settles on the CPU for. UsageError naming the flag.
void validateDevices(job::JobConfig& config, const DeviceRaw& raw);

// Why the job's way of training cannot run on GPU workers yet; empty: it can.
std::string whyNotOnGpu(const job::JobConfig& config);

}  // namespace balancenet::cli

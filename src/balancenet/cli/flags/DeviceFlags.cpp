// The device flags: declared for train, checked against this host's GPUs.
#include "balancenet/cli/flags/DeviceFlags.h"

#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceChoice.h"
#include "balancenet/device/GpuSupport.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::cli {
using job::JobConfig;

void addDeviceFlags(CLI::App& app, DeviceRaw& raw) {
  app.add_option("--device", raw.device,
                 "Where every worker computes: auto (its GPU where this host has one, local ranks taking the GPUs "
                 "in turn; else the CPU), cpu, cuda (the same, a GPU required) or cuda:N (every worker on GPU N)")
      ->capture_default_str();
  app.add_option("--devices", raw.devices,
                 "Each worker's device on this host, by local rank, comma separated (cuda:0,cuda:1,cpu): a job may "
                 "mix GPU and CPU workers, each given the share of the batch it can finish in time")
      ->default_str("");  // unset unless given: --print-config leaves it out
  app.add_option("--backend", raw.backend,
                 "What sums GPU gradients: auto (NCCL where every worker has a GPU of its own, else Gloo, which "
                 "copies GPU buckets through pinned host memory), gloo or nccl")
      ->capture_default_str();
}

std::string whyNotOnGpu(const JobConfig& c) {
  if (c.pipeline.enabled()) return "pipeline stages (--pipeline-stages)";
  if (c.comm.mode == comm::CommMode::ParameterServers) return "parameter servers (--comm ps)";
  return {};
}

device::DeviceOptions givenDevices(const DeviceRaw& raw) {
  device::DeviceOptions given{raw.device, {}, raw.backend};
  if (!raw.devices.empty()) {
    std::stringstream list(raw.devices);
    for (std::string name; std::getline(list, name, ',');) given.devices.push_back(name);
  }
  return given;
}

device::DeviceOptions settleDevices(const device::DeviceOptions& given, const std::string& whyNotOnGpu) {
  if (!device::mayUseGpu(given) || whyNotOnGpu.empty()) return given;
  if (device::needsGpu(given))
    throw UsageError(fmt::format("{}: not on GPU workers yet (use --device cpu)", whyNotOnGpu));
  return {"cpu", {}, "auto"};  // auto: the CPU, where these run
}

void validateDevices(JobConfig& c, const DeviceRaw& raw) {
  const int localWorkers = c.worker ? 0 : c.launch.nprocPerNode;  // a scheduler's worker knows only itself
  const auto given = givenDevices(raw);
  // The flags' own checks first, on the devices as given: a bad --devices entry is named as such.
  device::checkDeviceOptions(given, localWorkers);
  c.device = settleDevices(given, whyNotOnGpu(c));
  if (device::needsGpu(c.device)) {
    // Checked here, before any worker starts, for this host's workers; the same rule runs in each worker.
    const int gpus = device::gpuCount();
    for (int r = 0; r < std::max(localWorkers, 1); ++r)
      device::deviceFor(c.device, c.worker ? c.worker->localRank : r, gpus);
  }
}

}  // namespace balancenet::cli

#include "balancenet/device/DeviceChoice.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::device {
namespace {

// What one name asks for: the CPU, some GPU (index -1: the local rank's), or one GPU.
struct Asked {
  bool gpu = false;
  int index = -1;
};

Asked parseName(const std::string& name, const std::string& flag) {
  if (name == "cpu") return {};
  if (name == "cuda") return {true, -1};
  if (name.rfind("cuda:", 0) == 0) {
    const auto index = parseInteger<int>(name.substr(5));
    if (index && *index >= 0) return {true, *index};
  }
  throw UsageError(
      fmt::format("{} '{}': expected {}cpu, cuda or cuda:N", flag, name, flag == "--device" ? "auto, " : ""));
}

}  // namespace

void checkDeviceOptions(const DeviceOptions& options, int localWorkers) {
  if (options.device != "auto") parseName(options.device, "--device");
  if (options.backend != "auto" && options.backend != "gloo" && options.backend != "nccl")
    throw UsageError(fmt::format("--backend '{}': expected auto, gloo or nccl", options.backend));
  for (const auto& name : options.devices) parseName(name, "--devices");
  if (!options.devices.empty() && localWorkers > 0 && static_cast<int>(options.devices.size()) != localWorkers)
    throw UsageError(fmt::format("--devices names {} device{} for {} workers on this host: give one per worker",
                                 options.devices.size(), options.devices.size() == 1 ? "" : "s", localWorkers));
  if (options.backend != "nccl") return;
  if (options.devices.empty() && options.device == "cpu")
    throw UsageError("--backend nccl needs every worker on a GPU, and --device cpu puts them on the CPU");
  for (size_t i = 0; i < options.devices.size(); ++i)
    if (!parseName(options.devices[i], "--devices").gpu)
      throw UsageError(
          fmt::format("--backend nccl needs every worker on a GPU; --devices puts worker {} on the CPU "
                      "(use --backend gloo, or auto, for a job that mixes GPUs and CPUs)",
                      i));
  // NCCL takes one rank per GPU: a GPU named for two workers of this host is refused here, not once they meet.
  const Asked all =
      options.devices.empty() && options.device != "auto" ? parseName(options.device, "--device") : Asked{};
  if (all.index >= 0 && localWorkers > 1)
    throw UsageError(fmt::format("--backend nccl takes one worker per GPU, and --device {} puts {} workers on it",
                                 options.device, localWorkers));
  for (size_t i = 0; i < options.devices.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (parseName(options.devices[i], "--devices").index >= 0 && options.devices[i] == options.devices[j])
        throw UsageError(
            fmt::format("--backend nccl takes one worker per GPU, and --devices puts workers {} and {} "
                        "on {}",
                        j, i, options.devices[i]));
}

bool mayUseGpu(const DeviceOptions& options) {
  if (options.devices.empty()) return options.device != "cpu";
  for (const auto& name : options.devices)
    if (parseName(name, "--devices").gpu) return true;
  return false;
}

bool needsGpu(const DeviceOptions& options) {
  if (options.devices.empty()) return options.device != "auto" && parseName(options.device, "--device").gpu;
  return mayUseGpu(options);
}

c10::Device deviceFor(const DeviceOptions& options, int localRank, int gpus) {
  Asked asked;
  std::string flag = "--device";
  if (!options.devices.empty()) {
    if (localRank < 0 || localRank >= static_cast<int>(options.devices.size()))
      throw UsageError(fmt::format("--devices names {} devices; there is none for local worker {}",
                                   options.devices.size(), localRank));
    asked = parseName(options.devices[localRank], "--devices");
    flag = fmt::format("--devices (worker {})", localRank);
  } else if (options.device == "auto") {
    asked = {gpus > 0, -1};
  } else {
    asked = parseName(options.device, "--device");  // cpu, cuda (the local rank's in turn), cuda:N (every worker's)
  }
  if (!asked.gpu) return c10::Device(c10::DeviceType::CPU);
  if (gpus <= 0) throw UsageError(fmt::format("{} asks for a GPU, and this host has none that CUDA can use", flag));
  if (asked.index >= gpus)
    throw UsageError(fmt::format("{} asks for cuda:{}, and this host has {} GPU{} (cuda:0 to cuda:{})", flag,
                                 asked.index, gpus, gpus == 1 ? "" : "s", gpus - 1));
  const int index = asked.index >= 0 ? asked.index : localRank % gpus;
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
}

std::string deviceName(const c10::Device& device) { return device.str(); }

}  // namespace balancenet::device

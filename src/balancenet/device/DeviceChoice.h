// DeviceChoice: which device a worker trains on, from --device / --devices, its local rank and the GPUs its
// host has. Pure: the caller counts the GPUs (GpuSupport.h), so these rules are tested on machines without one.
#pragma once
#include <string>

#include <c10/core/Device.h>

#include "balancenet/device/DeviceOptions.h"

namespace balancenet::device {

// The flags on their own: --device is auto, cpu, cuda or cuda:N, every --devices entry cpu, cuda or cuda:N, one per
// worker of the host (`localWorkers`; 0: not known here), --backend is auto|gloo|nccl, and --backend nccl
// puts no worker on the CPU. Throws UsageError (one line).
void checkDeviceOptions(const DeviceOptions& options, int localWorkers);

// True when some worker of the host may be given a GPU (cuda or auto named anywhere): only then is the GPU
// support loaded and the GPUs counted.
bool mayUseGpu(const DeviceOptions& options);

// True when some worker must have a GPU (cuda named): with no GPU on the host that is an error, not a fallback.
bool needsGpu(const DeviceOptions& options);

// The device of the worker with `localRank` on a host with `gpus` GPUs. "cuda" alone (and auto) is the local
// rank's GPU, local ranks taking the GPUs in turn (rank r: cuda:(r mod gpus)), so two workers share a GPU
// only when the host has fewer GPUs than workers; --device cuda:N puts every worker of the host on GPU N. Throws
// UsageError: cuda asked with no GPU, an index the host lacks.
c10::Device deviceFor(const DeviceOptions& options, int localRank, int gpus);

// "cpu", "cuda:1": how the logs and the run's files name a device.
std::string deviceName(const c10::Device& device);

}  // namespace balancenet::device

// GpuSupport: torch's CUDA half, loaded on demand. balancenet links only libtorch_cpu (a CPU job starts 0.25 s
// sooner without libtorch_cuda and its libraries); a worker given a GPU loads libbalancenet_cuda.so (which brings
// libtorch_cuda and NCCL's group), or, in a build without that plugin, libtorch_cuda alone (GPUs, no NCCL).
// torch decides once per process whether CUDA is there, at its first question (a seed, a device count): the
// loading must come before any tensor work, so the program's first step is loadGpuSupportWhereADriverIs().
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include <c10/core/Device.h>
#include <c10/util/intrusive_ptr.h>

#include "balancenet/device/DeviceOptions.h"

namespace c10d {
class Backend;
class Store;
}  // namespace c10d

namespace balancenet::device {

// Whether this machine has an NVIDIA driver at all (its device nodes): without one, auto means the CPU and
// nothing is loaded.
bool gpuDriverPresent();

// Loads torch's CUDA half (once; later calls return at once). Throws RuntimeFailure when it cannot be loaded.
void loadGpuSupport();

// The program's first step: loads it where this machine has a GPU driver, before any torch call can settle that
// CUDA is absent (a seed does: at::manual_seed asks for the accelerator). A failure to load is kept for whoever
// asks for a GPU later, never thrown here: a CPU job on a GPU machine runs without it.
void loadGpuSupportWhereADriverIs();

// GPUs this process can use: 0 without a driver; otherwise loads the GPU support and asks CUDA.
int gpuCount();

// The device of local worker `localRank` under `options` (DeviceChoice.h), with the GPU support loaded and the
// GPU made current when it is one. Throws UsageError.
c10::Device prepareDevice(const DeviceOptions& options, int localRank);

// Whether NCCL groups can be made (the plugin loaded).
bool ncclAvailable();

// A NCCL group over `store` bound to GPU `device`. Throws RuntimeFailure (one line).
c10::intrusive_ptr<c10d::Backend> makeNcclGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                std::chrono::milliseconds timeout, const c10::Device& device);

// "cuda:0 (NVIDIA H200, 139.8 GiB)", "cpu": for the start-up line.
std::string describeDevice(const c10::Device& device);

}  // namespace balancenet::device

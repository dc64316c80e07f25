// GpuGroup: how a worker group sums GPU gradients. Every rank says where it computes; where all have a GPU of
// their own (device/GroupBackend.h), the group forms a NCCL group beside its Gloo one and GPU tensors go there.
#pragma once
#include <chrono>

#include <c10/core/Device.h>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/device/DeviceOptions.h"
#include "balancenet/device/GroupBackend.h"

namespace balancenet::comm {

// Collective over `comm`, after it forms and after every re-form (worker/Worker.cpp; the tests' thread ranks). Throws
// RuntimeFailure where --backend nccl cannot run (a rank on the CPU, two ranks on one GPU).
device::GroupBackend attachGpuGroup(Communicator& comm, const c10::Device& device, const device::DeviceOptions& options,
                                    std::chrono::milliseconds timeout);

}  // namespace balancenet::comm

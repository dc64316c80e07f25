// DeviceWork: what a GPU's asynchrony asks of code that times or sizes work. A CUDA kernel returns before it has
// run, so a step timed on the host must first wait for the device; memory for the policies' caps is the device's.
// On the CPU both are what they were: no wait, the host's memory.
#pragma once
#include <cstdint>

#include <c10/core/Device.h>

namespace balancenet::device {

// Returns once the work queued so far on `device`'s current stream is done (the CPU: at once). Only that stream:
// collectives running on their own streams (NCCL's) are not waited for, so a step's compute is timed without them.
void waitForDevice(const c10::Device& device);

struct DeviceMemory {
  int64_t totalBytes = 0;
  int64_t freeBytes = 0;
  int64_t peakAllocatedBytes = 0;  // the caching allocator's peak since the process started
};

// A GPU's memory, as CUDA and torch's caching allocator see it; nothing (all 0) for the CPU, whose memory the
// node monitor reads.
DeviceMemory deviceMemory(const c10::Device& device);

}  // namespace balancenet::device

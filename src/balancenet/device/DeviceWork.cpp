#include "balancenet/device/DeviceWork.h"

#include <ATen/DeviceAccelerator.h>

namespace balancenet::device {

void waitForDevice(const c10::Device& device) {
  if (!device.is_cuda()) return;
  at::accelerator::getCurrentStream(device.index()).synchronize();
}

DeviceMemory deviceMemory(const c10::Device& device) {
  DeviceMemory memory;
  if (!device.is_cuda()) return memory;
  const auto [freeBytes, totalBytes] = at::accelerator::getMemoryInfo(device.index());
  memory.freeBytes = static_cast<int64_t>(freeBytes);
  memory.totalBytes = static_cast<int64_t>(totalBytes);
  const auto stats = at::accelerator::getDeviceStats(device.index());
  memory.peakAllocatedBytes =
      stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  return memory;
}

}  // namespace balancenet::device

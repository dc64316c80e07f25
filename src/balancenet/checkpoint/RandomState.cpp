#include "balancenet/checkpoint/RandomState.h"

#include <ATen/ATen.h>

#include <cstring>

#include "balancenet/device/DeviceRandom.h"

namespace balancenet::checkpoint {
namespace {

std::string bytesOf(const at::Tensor& state) {
  const at::Tensor bytes = state.contiguous();
  return std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), bytes.numel());
}

}  // namespace

std::string localRandomState() { return bytesOf(device::generatorState(c10::Device(c10::DeviceType::CPU))); }

std::string localGpuRandomState(const c10::Device& device) {
  return device.is_cuda() ? bytesOf(device::generatorState(device)) : std::string();
}

at::Tensor randomStateFromBytes(const std::string& bytes) {
  if (bytes.empty()) return at::Tensor();
  at::Tensor state = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  std::memcpy(state.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return state;
}

}  // namespace balancenet::checkpoint

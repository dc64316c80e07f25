#include "balancenet/checkpoint/RandomState.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cstring>

namespace balancenet::checkpoint {

std::string localRandomState() {
  const at::Tensor state = at::detail::getDefaultCPUGenerator().get_state().contiguous();
  return std::string(reinterpret_cast<const char*>(state.data_ptr<uint8_t>()), state.numel());
}

at::Tensor randomStateFromBytes(const std::string& bytes) {
  if (bytes.empty()) return at::Tensor();
  at::Tensor state = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  std::memcpy(state.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return state;
}

}  // namespace balancenet::checkpoint

#include "balancenet/device/DeviceRandom.h"

#include <ATen/Context.h>

#include <mutex>

namespace balancenet::device {

at::Tensor generatorState(const c10::Device& device) {
  at::Generator generator = at::globalContext().defaultGenerator(device);  // a handle on the shared generator
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void restoreGeneratorState(const c10::Device& device, const at::Tensor& state) {
  if (!state.defined()) return;
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace balancenet::device

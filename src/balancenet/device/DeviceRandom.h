// DeviceRandom: the default generator of a device, the one its random draws come from (dropout masks): the CPU's or
// one GPU's. A training state keeps it, so that a resumed or joining worker draws the masks the uninterrupted run
// would have. A GPU's generator is reached through libtorch_cpu's CUDA hooks, which torch's CUDA half fills once
// GpuSupport has loaded it: nothing here links CUDA.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace balancenet::device {

// The state of `device`'s default generator: a CPU byte tensor whatever the device.
at::Tensor generatorState(const c10::Device& device);

// Installs `state` (generatorState of the same kind of device) in `device`'s default generator; an undefined tensor
// leaves it as it is.
void restoreGeneratorState(const c10::Device& device, const at::Tensor& state);

}  // namespace balancenet::device

// This process's generator states (dropout masks, random init) as bytes, and back.
#pragma once
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace balancenet::checkpoint {

// The CPU generator's.
std::string localRandomState();
// The generator of `device` where it is a GPU; empty for the CPU (a CPU worker keeps only the one above).
std::string localGpuRandomState(const c10::Device& device);
// The generator state tensor TrainingState::rng expects; undefined for empty bytes.
at::Tensor randomStateFromBytes(const std::string& bytes);

}  // namespace balancenet::checkpoint

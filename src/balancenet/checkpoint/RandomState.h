// This process's CPU generator state (dropout masks, random init) as bytes, and back.
#pragma once
#include <string>

#include <ATen/core/Tensor.h>

namespace balancenet::checkpoint {

std::string localRandomState();
// The generator state tensor TrainingState::rng expects; undefined for empty bytes.
at::Tensor randomStateFromBytes(const std::string& bytes);

}  // namespace balancenet::checkpoint

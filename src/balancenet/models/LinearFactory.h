// LinearFactory: how models obtain their fully connected layers (plain, or capturing sufficient factors).
#pragma once
#include <cstdint>
#include <functional>

#include <torch/nn/modules/container/any.h>

namespace balancenet::models {

// Returns a module whose forward maps [K,in] to [K,out] with parameters named `weight` [out,in] and `bias`
// [out], initialised like torch::nn::Linear(in, out) from the same RNG state. The worker injects a
// factor-capturing layer through this (--comm sfb|hybrid); empty means torch::nn::Linear(in, out).
using LinearFactory = std::function<torch::nn::AnyModule(int64_t inFeatures, int64_t outFeatures)>;

}  // namespace balancenet::models

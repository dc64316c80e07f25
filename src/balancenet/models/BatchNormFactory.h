// BatchNormFactory: how models obtain their BatchNorm layers (plain or synchronised across ranks).
#pragma once
#include <cstdint>
#include <functional>

#include <torch/nn/modules/container/any.h>

namespace balancenet::models {

// Returns a module whose forward maps [N,C,H,W] to [N,C,H,W] for C = channels. The trainer injects a
// synchronised BatchNorm through this (--sync-bn); empty means torch::nn::BatchNorm2d(channels).
using BatchNormFactory = std::function<torch::nn::AnyModule(int64_t channels)>;

}  // namespace balancenet::models

// Network: the interface every model of the zoo implements.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include "balancenet/models/Blocks.h"

namespace balancenet::models {

class Network : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;

  // The ordered blocks whose forwards, chained, are forward(): every zoo model has at least 2. This
  // default, for a network that cannot be cut, is one block: the whole network.
  virtual std::vector<BlockInfo> blocks() const;
  // Blocks [first, end) as one module sharing this network's tensors. Throws InternalError for an
  // empty or out-of-range span.
  virtual std::shared_ptr<BlockRange> blockRange(size_t first, size_t end);
  // Pipeline stages own disjoint tensors: a network whose blocks share one (gpt's head tied to its
  // embedding) gives each block its own copy here, equal at the time of the call. Default: nothing shared.
  virtual void separateSharedWeights() {}

 protected:
  // One sample's output, for the default blocks(): {classes}, or {T, vocabulary} for token models.
  std::vector<int64_t> wholeOutputShape_{10};
  // Throws InternalError unless [first, end) is a non-empty span of `blockCount` blocks.
  static void requireSpan(size_t first, size_t end, size_t blockCount);
};

}  // namespace balancenet::models

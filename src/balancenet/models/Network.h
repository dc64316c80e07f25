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
  // Every model is built for Fashion-MNIST: input [N,1,28,28] (float), output logits [N,10].
  static constexpr int64_t kInputChannels = 1;
  static constexpr int64_t kInputSize = 28;
  static constexpr int64_t kNumClasses = 10;

  virtual at::Tensor forward(const at::Tensor& x) = 0;

  // The ordered blocks whose forwards, chained, are forward(): every zoo model has at least 2. This
  // default, for a network that cannot be cut, is one block: the whole network.
  virtual std::vector<BlockInfo> blocks() const;
  // Blocks [first, end) as one module sharing this network's tensors. Throws InternalError for an
  // empty or out-of-range span.
  virtual std::shared_ptr<BlockRange> blockRange(size_t first, size_t end);

 protected:
  // Throws InternalError unless [first, end) is a non-empty span of `blockCount` blocks.
  static void requireSpan(size_t first, size_t end, size_t blockCount);
};

}  // namespace balancenet::models

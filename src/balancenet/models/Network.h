// Network: the interface every model of the zoo implements.
#pragma once
#include <cstdint>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace balancenet::models {

class Network : public torch::nn::Module {
 public:
  // Every model is built for Fashion-MNIST: input [N,1,28,28] (float), output logits [N,10].
  static constexpr int64_t kInputChannels = 1;
  static constexpr int64_t kInputSize = 28;
  static constexpr int64_t kNumClasses = 10;

  virtual at::Tensor forward(const at::Tensor& x) = 0;
};

}  // namespace balancenet::models

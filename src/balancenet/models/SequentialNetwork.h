// SequentialNetwork: a Network whose forward is one Sequential of layers, the shape of every zoo model.
#pragma once
#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/sequential.h>

#include "balancenet/models/Network.h"

namespace balancenet::models {

// Models differ only in the layers their constructor builds; the forward pass is shared here.
class SequentialNetwork : public Network {
 public:
  at::Tensor forward(const at::Tensor& x) override { return layers_->forward(x); }

 protected:
  // Registered as "layers", so parameter names read "layers.<index>.weight".
  void setLayers(torch::nn::Sequential layers) { layers_ = register_module("layers", std::move(layers)); }

 private:
  torch::nn::Sequential layers_{nullptr};
};

}  // namespace balancenet::models

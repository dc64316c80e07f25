// SequentialNetwork: a Network whose forward is one Sequential of layers, the shape of every zoo model.
#pragma once
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/sequential.h>

#include "balancenet/models/LayerBuilder.h"
#include "balancenet/models/Network.h"

namespace balancenet::models {

// Models differ only in the layers their constructor builds; the forward pass and the cut into blocks
// (the builder's, see LayerBuilder.h) are shared here.
class SequentialNetwork : public Network {
 public:
  at::Tensor forward(const at::Tensor& x) override { return layers_->forward(x); }
  std::vector<BlockInfo> blocks() const override;
  std::shared_ptr<BlockRange> blockRange(size_t first, size_t end) override;

 protected:
  // The builder's layers, registered as "layers" (parameter names read "layers.<index>.weight"), and its blocks.
  void setLayers(const LayerBuilder& built);

 private:
  torch::nn::Sequential layers_{nullptr};
  std::vector<LayerBlock> blocks_;
};

}  // namespace balancenet::models

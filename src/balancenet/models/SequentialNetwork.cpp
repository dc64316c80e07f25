// SequentialNetwork: the builder's blocks, and a run of them as a module sharing the network's layers.
#include "balancenet/models/SequentialNetwork.h"

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace balancenet::models {
namespace {

// The same layer objects as the network's, under the same names ("layers.<index>"), so parameters(),
// named_parameters() and train()/eval() reach the network's own modules.
class SequentialRange : public BlockRange {
 public:
  SequentialRange(const torch::nn::Sequential& all, size_t firstLayer, size_t endLayer) {
    torch::nn::Sequential part;
    for (size_t i = firstLayer; i < endLayer; ++i) part->push_back(std::to_string(i), *(all->begin() + i));
    layers_ = register_module("layers", std::move(part));
  }
  at::Tensor forward(const at::Tensor& x) override { return layers_->forward(x); }

 private:
  torch::nn::Sequential layers_{nullptr};
};

}  // namespace

void SequentialNetwork::setLayers(const LayerBuilder& built) {
  layers_ = register_module("layers", built.layers());
  blocks_ = built.blocks();
  // Chained blocks must be the whole forward: every layer in exactly one block, in order.
  size_t next = 0;
  for (const LayerBlock& block : blocks_) {
    if (block.firstLayer != next || block.endLayer <= block.firstLayer)
      throw std::logic_error(fmt::format("block {} does not continue at layer {}", block.info.name, next));
    next = block.endLayer;
  }
  if (next != layers_->size()) throw std::logic_error("the blocks do not cover every layer");
}

std::vector<BlockInfo> SequentialNetwork::blocks() const {
  std::vector<BlockInfo> infos;
  for (const LayerBlock& block : blocks_) infos.push_back(block.info);
  return infos;
}

std::shared_ptr<BlockRange> SequentialNetwork::blockRange(size_t first, size_t end) {
  requireSpan(first, end, blocks_.size());
  return std::make_shared<SequentialRange>(layers_, blocks_[first].firstLayer, blocks_[end - 1].endLayer);
}

}  // namespace balancenet::models

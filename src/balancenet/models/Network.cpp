// The fallback for a network that cannot be cut: one block, the whole network.
#include "balancenet/models/Network.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::models {
namespace {

// Holds the network as its only child, so parameters() and buffers() are the network's.
class WholeNetwork : public BlockRange {
 public:
  explicit WholeNetwork(std::shared_ptr<Network> net) : net_(register_module("net", std::move(net))) {}
  at::Tensor forward(const at::Tensor& x) override { return net_->forward(x); }

 private:
  std::shared_ptr<Network> net_;
};

}  // namespace

std::vector<BlockInfo> Network::blocks() const {
  BlockInfo whole;
  whole.name = "model";
  whole.kind = "whole";
  for (const auto& p : parameters()) whole.parameters += p.numel();
  whole.outputShape = wholeOutputShape_;
  whole.outputElementsPerSample = 1;
  for (int64_t d : wholeOutputShape_) whole.outputElementsPerSample *= d;
  return {whole};
}

void Network::requireSpan(size_t first, size_t end, size_t blockCount) {
  if (first >= end || end > blockCount)
    throw InternalError(fmt::format("blocks [{}, {}) of a network with {} blocks", first, end, blockCount));
}

std::shared_ptr<BlockRange> Network::blockRange(size_t first, size_t end) {
  requireSpan(first, end, 1);
  return std::make_shared<WholeNetwork>(std::static_pointer_cast<Network>(shared_from_this()));
}

}  // namespace balancenet::models

// RecomputedForward: the network's forward as the chain of its blocks, each under a checkpoint: the forward keeps
// only the block's input, and backward runs the block's forward again (with grad, under the same autocast and
// random state) to take its gradients, as torch.utils.checkpoint's reentrant form does. The gradient is the one
// without: the same operations on the same values. The block's buffers (BatchNorm's running statistics) are put
// back after the second forward, so they move once a pass, as without.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>

#include "balancenet/models/Network.h"
#include "balancenet/precision/Precision.h"

namespace balancenet::recompute {

// Throws UsageError in one line unless a model of `blockCount` blocks can be recomputed block by block (at least two:
// one block rebuilt whole keeps what none keeps). The start check asks it before any worker starts.
void requireRecomputableBlocks(size_t blockCount);

class RecomputedForward {
 public:
  // Throws requireRecomputableBlocks's UsageError for `net`'s blocks.
  RecomputedForward(models::Network& net, precision::Precision precision, c10::DeviceType device);

  // net.forward(x), keeping the blocks' inputs only.
  at::Tensor forward(const at::Tensor& x);

 private:
  std::vector<std::shared_ptr<models::BlockRange>> blocks_;
  // Requires grad, so that every block's checkpoint has an input that does (the first block's input is data).
  at::Tensor anchor_;
  precision::Precision precision_;
  c10::DeviceType device_;
};

}  // namespace balancenet::recompute

// RecomputedForward: one custom autograd function per block call; its backward re-enters autograd.
#include "balancenet/recompute/RecomputedForward.h"

#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceRandom.h"
#include "balancenet/precision/AutocastScope.h"

namespace balancenet::recompute {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The block, the autocast and the random state the first forward ran in travel in the context, for the second.
struct CheckpointedBlock : torch::autograd::Function<CheckpointedBlock> {
  // `anchor` takes no part in the computation: it only makes the output require grad.
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor anchor, models::BlockRange* block,
                            precision::Precision precision, c10::DeviceType device) {
    (void)anchor;
    ctx->save_for_backward({x});
    ctx->saved_data["block"] = reinterpret_cast<int64_t>(block);  // it lives as long as its RecomputedForward
    ctx->saved_data["precision"] = static_cast<int64_t>(precision);
    ctx->saved_data["device"] = static_cast<int64_t>(device);
    ctx->saved_data["random"] = device::generatorState(x.device());  // dropout draws the same masks the second time
    return block->forward(x);  // autograd is off inside a custom function's forward
  }

  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    const auto x = ctx->get_saved_variables()[0];
    auto* block = reinterpret_cast<models::BlockRange*>(ctx->saved_data["block"].toInt());
    auto input = x.detach().requires_grad_(x.requires_grad());
    std::vector<at::Tensor> buffers;
    for (const auto& b : block->buffers()) buffers.push_back(b.clone());
    const at::Tensor randomNow = device::generatorState(input.device());
    device::restoreGeneratorState(input.device(), ctx->saved_data["random"].toTensor());
    at::Tensor output;
    {
      at::AutoGradMode withGrad(true);
      const precision::AutocastScope autocast(static_cast<precision::Precision>(ctx->saved_data["precision"].toInt()),
                                              static_cast<c10::DeviceType>(ctx->saved_data["device"].toInt()));
      output = block->forward(input);
    }
    device::restoreGeneratorState(input.device(), randomNow);
    // Re-entrant: the block's parameters take their gradients here, the input's goes back down the chain.
    torch::autograd::backward({output}, {gradOutputs[0]});
    {  // after the backward, which may read the buffers the second forward saved (batch_norm's)
      at::NoGradGuard noGrad;
      size_t i = 0;
      for (auto& b : block->buffers()) b.copy_(buffers[i++]);
    }
    return {input.requires_grad() ? input.grad() : at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

void requireRecomputableBlocks(size_t blockCount) {
  require(blockCount >= 2,
          "--recompute blocks needs a model cut into blocks; this one is one block (a TorchScript model is cut at its "
          "top-level children only when its forward chains them)");
}

RecomputedForward::RecomputedForward(models::Network& net, precision::Precision precision, c10::DeviceType device)
    : precision_(precision), device_(device) {
  const auto blocks = net.blocks();
  requireRecomputableBlocks(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) blocks_.push_back(net.blockRange(i, i + 1));
  anchor_ = at::zeros({}, at::TensorOptions().dtype(at::kFloat)).set_requires_grad(true);
}

at::Tensor RecomputedForward::forward(const at::Tensor& x) {
  at::Tensor h = x;
  for (auto& block : blocks_) h = CheckpointedBlock::apply(h, anchor_, block.get(), precision_, device_);
  return h;
}

}  // namespace balancenet::recompute

// ShardedState: pieces of the parameters in and out of one flat slice, and the padded all-gather.
#include "balancenet/trainer/ShardedState.h"

#include <algorithm>
#include <numeric>

#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::trainer {
namespace {

// The element view of a piece inside its tensor.
at::Tensor view(const at::Tensor& t, const memory::Piece& p) { return t.view({-1}).narrow(0, p.offset, p.length); }

}  // namespace

ShardedState::ShardedState(const std::vector<at::Tensor>& params, std::vector<int64_t> sliceSizes, int rank)
    : params_(params), sizes_(std::move(sliceSizes)), offsets_(memory::sliceOffsets(sizes_)), rank_(rank) {
  std::vector<int64_t> numels;
  for (const auto& p : params_) numels.push_back(p.numel());
  const int64_t total = std::accumulate(numels.begin(), numels.end(), int64_t{0});
  if (rank_ < 0 || rank_ >= static_cast<int>(sizes_.size()) ||
      std::accumulate(sizes_.begin(), sizes_.end(), int64_t{0}) != total)
    throw InternalError(fmt::format("state slices of {} elements for rank {} of {}, the parameters hold {}",
                                    std::accumulate(sizes_.begin(), sizes_.end(), int64_t{0}), rank_, sizes_.size(),
                                    total));
  for (size_t r = 0; r < sizes_.size(); ++r) every_.push_back(memory::piecesOf(numels, offsets_[r], sizes_[r]));
  mine_ = every_[rank_];
  const auto options = params_.empty() ? at::TensorOptions().dtype(at::kFloat) : params_.front().options();
  slice_ = at::zeros({sizes_[rank_]}, options).set_requires_grad(true);
  readSlice();
}

void ShardedState::readSlice() {
  at::NoGradGuard noGrad;
  for (const auto& p : mine_) slice_.narrow(0, p.flatOffset, p.length).copy_(view(params_[p.tensor], p));
}

void ShardedState::takeGradients(const std::vector<at::Tensor>& grads) {
  if (!slice_.grad().defined()) slice_.mutable_grad() = at::zeros_like(slice_);
  auto& g = slice_.mutable_grad();
  for (const auto& p : mine_) g.narrow(0, p.flatOffset, p.length).copy_(view(grads[p.tensor], p));
}

int64_t ShardedState::shareUpdates(comm::Collectives& comm) {
  at::NoGradGuard noGrad;
  const int64_t widest = *std::max_element(sizes_.begin(), sizes_.end());
  if (!padded_.defined()) {
    padded_ = at::zeros({widest}, slice_.options().requires_grad(false));
    for (size_t r = 0; r < sizes_.size(); ++r) gathered_.push_back(at::empty_like(padded_));
  }
  padded_.narrow(0, 0, sizes_[rank_]).copy_(slice_.detach());
  const int64_t wire = widest * 4 * (static_cast<int64_t>(sizes_.size()) - 1);
  comm.allgatherAsync(padded_, gathered_, wire).wait();
  for (size_t r = 0; r < every_.size(); ++r)
    for (const auto& p : every_[r]) view(params_[p.tensor], p).copy_(gathered_[r].narrow(0, p.flatOffset, p.length));
  return wire;
}

std::vector<std::vector<at::Tensor>> ShardedState::gatherParameterStates(const std::vector<at::Tensor>& sliceState,
                                                                         comm::Collectives& comm) {
  at::NoGradGuard noGrad;
  std::vector<std::vector<at::Tensor>> perParameter(params_.size());
  if (sliceState.empty()) return perParameter;  // no step yet: no state anywhere (every worker steps together)
  const int64_t widest = *std::max_element(sizes_.begin(), sizes_.end());
  for (const auto& slot : sliceState) {
    if (slot.dim() == 0) {  // a count, the same on every worker
      for (auto& state : perParameter) state.push_back(slot.clone());
      continue;
    }
    auto padded = at::zeros({widest}, slot.options());
    padded.narrow(0, 0, sizes_[rank_]).copy_(slot);
    const auto slices = comm.allgather(padded);
    std::vector<at::Tensor> whole;
    for (const auto& p : params_) whole.push_back(at::zeros(p.sizes(), slot.options()));
    for (size_t r = 0; r < every_.size(); ++r)
      for (const auto& piece : every_[r])
        view(whole[piece.tensor], piece).copy_(slices[r].narrow(0, piece.flatOffset, piece.length));
    for (size_t i = 0; i < params_.size(); ++i) perParameter[i].push_back(whole[i]);
  }
  return perParameter;
}

std::vector<at::Tensor> ShardedState::sliceOfParameterStates(
    const std::vector<std::vector<at::Tensor>>& perParameter) const {
  at::NoGradGuard noGrad;
  if (perParameter.empty() || perParameter.front().empty()) return {};
  std::vector<at::Tensor> slots;
  for (size_t k = 0; k < perParameter.front().size(); ++k) {
    const auto& first = perParameter.front()[k];
    if (first.dim() == 0) {
      slots.push_back(first.clone());
      continue;
    }
    auto slot = at::zeros({sizes_[rank_]}, first.options());
    for (const auto& piece : mine_)
      slot.narrow(0, piece.flatOffset, piece.length).copy_(view(perParameter.at(piece.tensor).at(k), piece));
    slots.push_back(slot);
  }
  return slots;
}

}  // namespace balancenet::trainer

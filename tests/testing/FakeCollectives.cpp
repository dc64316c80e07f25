// FakeCollectives: every operation done in the calling thread before it returns; its PendingWork is an empty one.
#include "testing/FakeCollectives.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/comm/Exchange.h"
#include "balancenet/core/Error.h"

namespace balancenet::testing {

FakeCollectives::FakeCollectives(int rank, int size, OthersSum othersSum)
    : rank_(rank), size_(size), othersSum_(std::move(othersSum)), sameEverywhere_(!othersSum_) {
  if (!othersSum_) othersSum_ = [size](const at::Tensor& mine) { return mine * (size - 1); };
}

void FakeCollectives::sumInPlace(at::Tensor& t, const std::string& what) {
  calls_.push_back({what, t.numel()});
  at::NoGradGuard noGrad;
  if (size_ > 1) t.add_(othersSum_(t));
}

void FakeCollectives::allreduceSum(std::vector<at::Tensor>& tensors) {
  for (auto& t : tensors) sumInPlace(t, "allreduce");
}

void FakeCollectives::allreduceSum(at::Tensor& tensor, comm::Exchange exchange) {
  sumInPlace(tensor, exchange == comm::Exchange::Ring ? "allreduce" : comm::exchangeName(exchange));
}

comm::PendingWork FakeCollectives::allreduceSumAsync(at::Tensor tensor) {
  sumInPlace(tensor, "allreduce");
  return {};
}

void FakeCollectives::broadcast(std::vector<at::Tensor>& tensors, int /*root*/) {
  for (auto& t : tensors) calls_.push_back({"broadcast", t.numel()});
}

std::vector<at::Tensor> FakeCollectives::allgather(const at::Tensor& tensor) {
  calls_.push_back({"allgather", tensor.numel()});
  return std::vector<at::Tensor>(size_, tensor.clone());
}

comm::PendingWork FakeCollectives::allgatherAsync(at::Tensor input, std::vector<at::Tensor> outputs, int64_t) {
  calls_.push_back({"allgather", input.numel()});
  for (auto& out : outputs) out.copy_(input);
  return {};
}

comm::PendingWork FakeCollectives::alltoallAsync(at::Tensor input, at::Tensor output, int64_t) {
  calls_.push_back({"alltoall", input.numel()});
  // Every rank holds this rank's input, so part r from rank r is input[this rank].
  for (int r = 0; r < size_; ++r) output[r].copy_(input[rank_]);
  return {};
}

void FakeCollectives::barrier() { calls_.push_back({"barrier", 0}); }

comm::PendingWork FakeCollectives::sendAsync(at::Tensor t, int /*dst*/, int tag) {
  calls_.push_back({"send", t.numel()});
  sent_[tag].push_back(t.clone());
  return {};
}

comm::PendingWork FakeCollectives::recvAsync(at::Tensor t, int /*src*/, int tag) {
  recvFromAny(t, tag);
  return {};
}

int FakeCollectives::recvFromAny(at::Tensor& t, int tag) {
  calls_.push_back({"recv", t.numel()});
  auto& queue = sent_[tag];
  if (queue.empty()) throw RuntimeFailure(fmt::format("the fake world has no message with tag {} to receive", tag));
  t.copy_(queue.front());
  queue.pop_front();
  return rank_;
}

FakeCollectives& FakeCollectives::keptSubgroup(const std::vector<int>& members) {
  auto& kept = subgroups_[members];
  if (!kept) {
    const auto me = std::find(members.begin(), members.end(), rank_);
    if (me == members.end()) throw RuntimeFailure("a subgroup of the fake world without this rank");
    kept = std::make_unique<FakeCollectives>(static_cast<int>(me - members.begin()), static_cast<int>(members.size()),
                                             sameEverywhere_ ? OthersSum{} : othersSum_);
  }
  return *kept;
}

}  // namespace balancenet::testing

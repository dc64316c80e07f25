// Communicator over c10d: thin, but it owns error translation so callers never see c10 backtraces.
#include "balancenet/comm/Communicator.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

template <typename Fn>
void runCollective(const char* what, int rank, Fn&& fn) {
  try {
    auto work = fn();
    work->wait();
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("{} failed on rank {} (a peer died or the network broke): {}", what, rank,
                                     firstLine(e.what())));
  }
}

}  // namespace

Communicator::Communicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::ProcessGroup> group)
    : store_(std::move(store)), group_(std::move(group)), rank_(group_->getRank()), size_(group_->getSize()) {}

Communicator::~Communicator() = default;

void Communicator::allreduceSum(std::vector<at::Tensor>& tensors) {
  runCollective("all-reduce", rank_, [&] { return group_->allreduce(tensors); });
}

void Communicator::allreduceSum(at::Tensor& tensor) {
  std::vector<at::Tensor> one{tensor};
  allreduceSum(one);
}

void Communicator::broadcast(std::vector<at::Tensor>& tensors, int root) {
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  // One message per dtype: the tensors are flattened into one buffer, sent, and copied back.
  std::vector<at::ScalarType> dtypes;
  for (auto& t : tensors)
    if (std::find(dtypes.begin(), dtypes.end(), t.scalar_type()) == dtypes.end()) dtypes.push_back(t.scalar_type());
  for (auto dtype : dtypes) {
    std::vector<at::Tensor> same;
    for (auto& t : tensors)
      if (t.scalar_type() == dtype) same.push_back(t.reshape({-1}));
    std::vector<at::Tensor> flat{at::cat(same)};
    runCollective("broadcast", rank_, [&] { return group_->broadcast(flat, opts); });
    int64_t offset = 0;
    for (auto& t : tensors) {
      if (t.scalar_type() != dtype) continue;
      at::NoGradGuard noGrad;
      t.copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

std::vector<at::Tensor> Communicator::allgather(const at::Tensor& tensor) {
  std::vector<at::Tensor> input{tensor.contiguous()};
  std::vector<std::vector<at::Tensor>> output(1);
  for (int r = 0; r < size_; ++r) output[0].push_back(at::empty_like(input[0]));
  runCollective("all-gather", rank_, [&] { return group_->allgather(output, input); });
  return output[0];
}

void Communicator::barrier() {
  runCollective("barrier", rank_, [&] { return group_->barrier(); });
}

void Communicator::send(at::Tensor& t, int dst, int tag) {
  std::vector<at::Tensor> one{t};
  runCollective("send", rank_, [&] { return group_->send(one, dst, tag); });
}

void Communicator::recv(at::Tensor& t, int src, int tag) {
  std::vector<at::Tensor> one{t};
  runCollective("recv", rank_, [&] { return group_->recv(one, src, tag); });
}

}  // namespace balancenet::comm

// Communicator over c10d: thin, but it owns error translation so callers never see c10 backtraces.
#include "balancenet/comm/group/Communicator.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <algorithm>
#include <thread>
#include <utility>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/group/MeshAllReduce.h"
#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

int64_t bytesOf(const std::vector<at::Tensor>& tensors) {
  int64_t n = 0;
  for (const auto& t : tensors) n += t.numel() * static_cast<int64_t>(t.element_size());
  return n;
}

}  // namespace

Communicator::Communicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::Backend> group,
                           GroupMaker makeGroup)
    : store_(std::move(store)),
      group_(std::move(group)),
      makeGroup_(std::move(makeGroup)),
      rank_(group_->getRank()),
      size_(group_->getSize()) {}

std::unique_ptr<Communicator> Communicator::subgroup(const std::vector<int>& members) {
  const auto me = std::find(members.begin(), members.end(), rank_);
  if (!makeGroup_ || me == members.end())
    throw RuntimeFailure(fmt::format("rank {} cannot form a subgroup of ranks {}", rank_, fmt::join(members, ",")));
  auto scoped = scopedStore(subgroupPrefix(members), store_);
  const int rank = static_cast<int>(me - members.begin());
  c10::intrusive_ptr<c10d::Backend> group;
  try {
    group = makeGroup_(scoped, rank, static_cast<int>(members.size()));
  } catch (const std::exception& e) {
    rethrowAsFailure("forming a subgroup", rank_, e);
  }
  auto sub = std::make_unique<Communicator>(scoped, group, makeGroup_);
  sub->setLinkModel(link_);
  return sub;
}

Communicator& Communicator::keptSubgroup(const std::vector<int>& members) {
  auto& kept = keptSubgroups_[members];
  if (!kept) kept = subgroup(members);
  return *kept;
}

// A GPU group (NCCL's) ends here, with the group that drops it (an elastic re-form drops the old generation before
// forming the next), not in its own destructor later, which warns that it was never shut down and ends it whenever
// the last reference goes. abort(), not shutdown(): a group dropped after a failure has dead peers, and shutdown()
// flushes first, which would wait for them; a group dropped between steps has nothing left to flush.
Communicator::~Communicator() {
  if (!gpuGroup_) return;
  try {
    gpuGroup_->abort();
  } catch (const std::exception& e) {
    spdlog::warn("rank {}: ending the GPU group failed: {}", rank_, firstLine(e.what()));
  }
}

void Communicator::attachGpuGroup(c10::intrusive_ptr<c10d::Backend> gpuGroup) { gpuGroup_ = std::move(gpuGroup); }

c10d::Backend& Communicator::backendFor(const at::Tensor& tensor) {
  return tensor.is_cuda() && gpuGroup_ ? *gpuGroup_ : *group_;
}

LinkModel::Clock::time_point Communicator::deliveredAt(int64_t wireBytes) {
  const auto now = LinkModel::Clock::now();
  return link_ ? link_->deliveredAt(now, wireBytes) : now;
}

template <typename Start>
static PendingWork startOperation(const char* what, int rank, LinkModel::Clock::time_point deliveredAt, Start&& start,
                                  bool hasFuture = true) {
  try {
    return PendingWork(start(), deliveredAt, what, rank, hasFuture);
  } catch (const std::exception& e) {
    rethrowAsFailure(what, rank, e);
  }
}

// A sum over one rank is the tensor itself: no hand-off to Gloo's thread, which on a loaded host can wait
// a scheduling period for a core (tens of ms a step for a lone worker).
PendingWork Communicator::allreduceSumAsync(at::Tensor tensor) {
  if (size_ == 1) return PendingWork();
  std::vector<at::Tensor> one{std::move(tensor)};
  const int64_t wire = ringAllReduceWireBytes(bytesOf(one), size_);
  return startOperation("all-reduce", rank_, deliveredAt(wire), [&] { return backendFor(one[0]).allreduce(one); });
}

void Communicator::allreduceSum(std::vector<at::Tensor>& tensors) {
  if (size_ == 1 || tensors.empty()) return;
  const int64_t wire = ringAllReduceWireBytes(bytesOf(tensors), size_);
  startOperation("all-reduce", rank_, deliveredAt(wire), [&] {
    return backendFor(tensors.at(0)).allreduce(tensors);
  }).wait();
}

void Communicator::allreduceSum(at::Tensor& tensor, Exchange exchange) {
  // NCCL picks its own algorithm for a GPU tensor: the mesh's exchanges are Gloo's.
  if (exchange == Exchange::Ring || (tensor.is_cuda() && gpuGroup_)) return allreduceSum(tensor);
  if (size_ == 1) return;
  if (tensor.is_cuda()) {  // the mesh sums host memory: through a host copy
    at::Tensor host = tensor.to(at::kCPU);
    allreduceSum(host, exchange);
    tensor.copy_(host);
    return;
  }
  if (tensor.scalar_type() != at::kFloat || !tensor.is_contiguous())
    throw RuntimeFailure("the mesh all-reduce takes one contiguous float32 tensor");
  const auto until = deliveredAt(ringAllReduceWireBytes(tensor.numel() * int64_t(sizeof(float)), size_));
  try {
    if (!mesh_) {
      if (!makeGroup_) throw RuntimeFailure("this group cannot form its mesh");
      mesh_ = std::make_unique<MeshAllReduce>(makeGroup_(scopedStore(kMeshPrefix, store_), rank_, size_));
    }
    mesh_->allreduceSum(tensor.data_ptr<float>(), tensor.numel(), exchange);
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const std::exception& e) {
    rethrowAsFailure(exchangeName(exchange), rank_, e);
  }
  std::this_thread::sleep_until(until);  // the emulated link, as for the ring's all-reduce
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
    startOperation("broadcast", rank_, deliveredAt(bytesOf(flat)), [&] {
      return backendFor(flat[0]).broadcast(flat, opts);
    }).wait();
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
  auto input = tensor.contiguous();
  std::vector<at::Tensor> outputs;
  for (int r = 0; r < size_; ++r) outputs.push_back(at::empty_like(input));
  const int64_t wire = bytesOf({input}) * (size_ - 1);
  allgatherAsync(input, outputs, wire).wait();
  return outputs;
}

PendingWork Communicator::allgatherAsync(at::Tensor input, std::vector<at::Tensor> outputs, int64_t wireBytes) {
  std::vector<at::Tensor> in{std::move(input)};
  std::vector<std::vector<at::Tensor>> out{std::move(outputs)};
  return startOperation("all-gather", rank_, deliveredAt(wireBytes),
                        [&] { return backendFor(in[0]).allgather(out, in); });
}

PendingWork Communicator::alltoallAsync(at::Tensor input, at::Tensor output, int64_t wireBytes) {
  if (size_ == 1) {
    output.copy_(input);
    return PendingWork();
  }
  std::vector<int64_t> equalParts;  // empty: c10d splits the first dimension evenly
  return startOperation("all-to-all", rank_, deliveredAt(wireBytes),
                        [&] { return backendFor(input).alltoall_base(output, input, equalParts, equalParts); });
}

void Communicator::barrier() {
  startOperation("barrier", rank_, deliveredAt(0), [&] { return group_->barrier(); }).wait();
}

PendingWork Communicator::sendAsync(at::Tensor t, int dst, int tag) {
  if (!sendsInPlace(t)) t = t.to(at::kCPU);  // the work keeps the host copy until it is sent
  std::vector<at::Tensor> one{std::move(t)};
  return startOperation(
      "send", rank_, deliveredAt(bytesOf(one)), [&] { return backendFor(one[0]).send(one, dst, tag); },
      /*hasFuture=*/false);
}

PendingWork Communicator::recvAsync(at::Tensor t, int src, int tag) {
  const at::Tensor target = t;
  if (!sendsInPlace(t)) t = at::empty_like(t, t.options().device(at::kCPU));  // received on the host, copied at wait()
  std::vector<at::Tensor> one{t};
  // The sender's link pays for the message; receiving adds nothing of its own.
  auto work = startOperation(
      "recv", rank_, LinkModel::Clock::now(), [&] { return backendFor(one[0]).recv(one, src, tag); },
      /*hasFuture=*/false);
  if (!t.is_same(target)) work.thenOnWait([target, t]() mutable { target.copy_(t); });
  return work;
}

int Communicator::recvFromAny(at::Tensor& t, int tag) {
  std::vector<at::Tensor> one{t};
  try {
    auto work = group_->recvAnysource(one, tag);
    work->wait();
    return work->sourceRank();
  } catch (const std::exception& e) {
    rethrowAsFailure("recv", rank_, e);
  }
}

}  // namespace balancenet::comm

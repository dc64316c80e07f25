// The server loops (BSP and SSP) and the optimiser on the shard.
#include "balancenet/ps/ParameterServer.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/optim/optimizer.h>

#include "balancenet/core/Error.h"
#include "balancenet/ps/PsGroup.h"

namespace balancenet::ps {

ParameterServer::ParameterServer(comm::Communicator& group, ServerOptions options)
    : group_(group), options_(std::move(options)) {
  if (group_.size() <= options_.workers || group_.rank() != serverRank(options_.workers, options_.index))
    throw RuntimeFailure(fmt::format("parameter server {} has rank {} in a group of {} with {} workers", options_.index,
                                     group_.rank(), group_.size(), options_.workers));
  const int64_t size = options_.shard.size();
  shard_ = at::zeros({size}, at::kFloat);
  shard_.set_requires_grad(true);
  shard_.mutable_grad() = at::zeros({size}, at::kFloat);
  // The learning rate comes with every push; the one given here is replaced before the first step.
  optimizer_ = trainer::makeOptimizer(options_.optimizer, {shard_}, 0.0);
  for (int w = 0; w < options_.workers; ++w) replies_.emplace_back(size);
  sends_.resize(options_.workers);
}

ParameterServer::~ParameterServer() {
  // A run abandoned by an exception may leave replies in flight: let them end quietly.
  for (auto& s : sends_) try {
      s.wait();
    } catch (const std::exception&) {
    }
}

ServerReport ParameterServer::run() {
  receiveStartParameters();
  if (options_.staleness == 0)
    runSynchronous();
  else
    runStaleSynchronous();
  for (auto& s : sends_) s.wait();
  return report_;
}

void ParameterServer::receiveStartParameters() {
  PsMessage start(options_.shard.size());
  group_.recv(start.buffer(), 0, kInitTag);
  at::NoGradGuard noGrad;
  shard_.copy_(start.payload());
}

PsHeader ParameterServer::checkedPush(const PsMessage& message, int worker, int64_t expectedStep) const {
  const PsHeader h = message.header();
  if (h.step != expectedStep || h.scalarCount < 0 || h.scalarCount > kMaxScalars)
    throw RuntimeFailure(fmt::format("parameter server {}: worker {} pushed step {}, expected step {}", options_.index,
                                     worker, h.step, expectedStep));
  return h;
}

void ParameterServer::apply(const at::Tensor& gradient, double lr) {
  shard_.mutable_grad().copy_(gradient);
  trainer::setLearningRate(*optimizer_, lr);
  optimizer_->step();
}

void ParameterServer::reply(int worker, int64_t step, int64_t slowestClock, const PsHeader& scalarsFrom) {
  report_.largestClockGap = std::max(report_.largestClockGap, step - slowestClock);
  sends_[worker].wait();  // the worker has taken the previous reply before pushing again: no wait here
  PsHeader h = scalarsFrom;
  h.step = step;
  h.slowestClock = slowestClock;
  auto& message = replies_[worker];
  message.setHeader(h);
  message.payload().copy_(shard_.detach());
  sends_[worker] = group_.sendAsync(message.buffer(), worker, kReplyTag);
}

void ParameterServer::runSynchronous() {
  const int n = options_.workers;
  const PushCodec codec(options_.compression, options_.shard.size());
  std::vector<PsMessage> pushes;
  for (int w = 0; w < n; ++w) pushes.emplace_back(codec.payloadFloats());
  auto sum = at::zeros({options_.shard.size()}, at::kFloat);
  auto decoded = at::zeros({options_.shard.size()}, at::kFloat);
  for (int64_t step = 0; step < options_.steps; ++step) {
    std::vector<comm::PendingWork> receives;
    for (int w = 0; w < n; ++w) receives.push_back(group_.recvAsync(pushes[w].buffer(), w, kPushTag));
    // Summed in rank order, whatever the arrival order: the same bits on every run.
    sum.zero_();
    PsHeader total;
    double lr = 0;
    for (int w = 0; w < n; ++w) {
      receives[w].wait();
      const PsHeader h = checkedPush(pushes[w], w, step);
      sum.add_(codec.decode(pushes[w].payload(), decoded));
      total.scalarCount = h.scalarCount;
      for (int i = 0; i < h.scalarCount; ++i) total.scalars[i] += h.scalars[i];
      if (w == 0) lr = h.lr;
    }
    apply(sum, lr);
    report_.pushes += n;
    for (int w = 0; w < n; ++w) reply(w, step + 1, step + 1, total);
  }
}

void ParameterServer::runStaleSynchronous() {
  const int n = options_.workers;
  const int64_t steps = options_.steps;
  std::vector<int64_t> clocks(n, 0);  // steps each worker has pushed
  std::vector<bool> waiting(n, false);
  // A worker about to start step c may go once the slowest has pushed c - staleness steps; after its
  // last step it waits for everyone, so all end on the same parameters.
  auto mayStart = [&](int64_t c, int64_t slowest) { return slowest >= (c >= steps ? steps : c - options_.staleness); };
  const PushCodec codec(options_.compression, options_.shard.size());
  PsMessage push(codec.payloadFloats());
  auto decoded = at::zeros({options_.shard.size()}, at::kFloat);
  for (int64_t left = n * steps; left > 0; --left) {
    const int w = group_.recvFromAny(push.buffer(), kPushTag);
    if (w < 0 || w >= n)
      throw RuntimeFailure(
          fmt::format("parameter server {}: a push came from rank {}, not a worker", options_.index, w));
    const PsHeader h = checkedPush(push, w, clocks[w]);
    apply(codec.decode(push.payload(), decoded), h.lr);
    ++report_.pushes;
    ++clocks[w];
    waiting[w] = true;
    const int64_t slowest = *std::min_element(clocks.begin(), clocks.end());
    for (int v = 0; v < n; ++v)
      if (waiting[v] && mayStart(clocks[v], slowest)) {
        reply(v, clocks[v], slowest, PsHeader{});
        waiting[v] = false;
      }
  }
}

}  // namespace balancenet::ps

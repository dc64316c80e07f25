// Local SGD of a federated client.
#include "balancenet/federated/process/LocalTraining.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "balancenet/core/PortableRandom.h"
#include "balancenet/core/Stopwatch.h"

namespace balancenet::federated {

ClientShard takeShard(std::shared_ptr<const data::Dataset> train, const std::vector<int64_t>& indices) {
  return {data::subsetOf(std::move(train), indices)};
}

LocalBatches::LocalBatches(uint64_t seed, int64_t round, int clients, int client, int64_t shardSize, int64_t batch)
    : gen_(seededGenerator(
          seed, static_cast<uint64_t>(round) * static_cast<uint64_t>(clients) + static_cast<uint64_t>(client))),
      drawSeed_(gen_()),
      order_(static_cast<size_t>(shardSize)),
      batch_(std::min(batch, shardSize)) {
  reshuffle();
}

void LocalBatches::reshuffle() {
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
  portableShuffle(order_, gen_);
  used_ = 0;
  ++passes_;
}

std::vector<data::Draw> LocalBatches::nextDraws() {
  const std::vector<int64_t> positions = next();
  std::vector<data::Draw> draws;
  draws.reserve(positions.size());
  for (int64_t p : positions) draws.push_back({p, data::augmentSeed(drawSeed_, passes_, p)});
  return draws;
}

std::vector<int64_t> LocalBatches::next() {
  if (used_ + static_cast<size_t>(batch_) > order_.size()) reshuffle();
  std::vector<int64_t> batch(order_.begin() + used_, order_.begin() + used_ + batch_);
  used_ += static_cast<size_t>(batch_);
  return batch;
}

at::Tensor momentumDirection(const at::Tensor& gradient, at::Tensor& buffer, double momentum) {
  buffer = buffer.defined() ? buffer.mul_(momentum).add_(gradient) : gradient.clone();  // torch's first step: b = g
  return buffer;
}

namespace {

// One SGD step on one batch; returns its real compute time in ms. `buffers`: the momentum buffers, one per
// parameter (undefined: no step yet), used when momentum > 0.
double sgdStep(models::Network& net, const ClientShard& shard, const objective::Objective& objective,
               const std::vector<data::Draw>& batch, double lr, double mu, const std::vector<at::Tensor>& start,
               double momentum, std::vector<at::Tensor>& buffers) {
  Stopwatch watch;
  const data::Batch b = shard.data->trainingBatch(batch);
  net.zero_grad();
  auto loss = objective.trainingLossSum(net.forward(b.inputs), b.targets) / static_cast<double>(batch.size());
  loss.backward();
  at::NoGradGuard noGrad;
  auto params = net.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    auto g = p.grad();
    if (mu > 0) g = g + mu * (p - start[i]);  // the gradient of (mu / 2) ||w - w_start||^2
    if (momentum > 0) g = momentumDirection(g, buffers[i], momentum);
    p.sub_(g, lr);
  }
  return watch.elapsedMs();
}

}  // namespace

LocalWork trainLocally(models::Network& net, const ClientShard& shard, const objective::Objective& objective,
                       const MessageHeader& task, LocalBatches& batches, const ClientPace& pace) {
  net.train();
  std::vector<at::Tensor> start;
  if (task.mu > 0)
    for (const auto& p : net.parameters()) start.push_back(p.detach().clone());
  std::vector<at::Tensor> buffers(net.parameters().size());
  LocalWork work;
  Stopwatch elapsed;
  double lastStepS = 0;
  for (int64_t step = 0; step < task.localSteps; ++step) {
    auto batch = batches.nextDraws();
    const auto samples = static_cast<int64_t>(batch.size());
    if (task.deadlineS > 0) {
      double expected = lastStepS;
      if (pace.mode == emulation::PaceMode::Paced) expected = std::max(expected, samples / pace.factor);
      if (elapsed.elapsedMs() / 1000 + expected > task.deadlineS) {
        work.stoppedEarly = true;
        break;
      }
    }
    Stopwatch stepWatch;
    const double computeMs = sgdStep(net, shard, objective, batch, task.lr, task.mu, start, task.momentum, buffers);
    if (pace.mode) {
      const double sleepMs = emulation::paceSleepMs(*pace.mode, pace.factor, computeMs, samples);
      if (sleepMs > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleepMs));
    }
    lastStepS = stepWatch.elapsedMs() / 1000;
    ++work.doneSteps;
    work.samples += samples;
  }
  work.computeSeconds = elapsed.elapsedMs() / 1000;
  return work;
}

}  // namespace balancenet::federated

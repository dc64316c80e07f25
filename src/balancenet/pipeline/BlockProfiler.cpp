// BlockProfiler: each block's measured forward and backward time on this node, and the links' speed.
#include "balancenet/pipeline/BlockProfiler.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Median.h"

namespace balancenet::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Everything profiling touches that training reads later: the gradients (backward accumulates into them),
// the buffers (BatchNorm's running statistics move on every training forward) and the default generator
// (dropout draws from it). Restored on destruction, so an exception while profiling leaves no trace either.
class ProfilingScope {
 public:
  explicit ProfilingScope(models::Network& net) : net_(net), rng_(at::detail::getDefaultCPUGenerator().get_state()) {
    for (const auto& p : net.parameters()) grads_.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
    for (const auto& b : net.buffers()) buffers_.push_back(b.clone());
  }
  ~ProfilingScope() {
    at::NoGradGuard noGrad;
    auto params = net_.parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads_[i];
    auto buffers = net_.buffers();
    for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(buffers_[i]);
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle on the shared generator
    generator.set_state(rng_);
  }
  ProfilingScope(const ProfilingScope&) = delete;
  ProfilingScope& operator=(const ProfilingScope&) = delete;

 private:
  models::Network& net_;
  at::Tensor rng_;
  std::vector<at::Tensor> grads_, buffers_;
};

// One block's forward and backward as a stage runs them: the input requires its gradient except for the
// first block (stage 0 sends none back), and the output's gradient is ones, the shape of what arrives.
struct BlockRun {
  double forwardMs = 0, backwardMs = 0;
  at::Tensor output;  // detached: the next block's input
};

BlockRun runBlock(models::BlockRange& block, const at::Tensor& input, bool inputNeedsGrad) {
  BlockRun run;
  const at::Tensor x = input.detach().requires_grad_(inputNeedsGrad);
  auto start = Clock::now();
  const at::Tensor y = block.forward(x);
  run.forwardMs = msSince(start);
  const at::Tensor gradient = at::ones_like(y);
  start = Clock::now();
  y.backward(gradient);
  run.backwardMs = msSince(start);
  run.output = y.detach();
  return run;
}

}  // namespace

BlockTimes profileBlocks(models::Network& net, const at::Tensor& inputs, int repeats) {
  if (repeats < 1 || inputs.dim() == 0 || inputs.size(0) < 1)
    throw InternalError("profileBlocks needs at least one repeat and one sample");
  const ProfilingScope restoreAfterwards(net);
  const auto samples = static_cast<double>(inputs.size(0));
  const size_t count = net.blocks().size();
  BlockTimes times;
  at::Tensor x = inputs;
  for (size_t k = 0; k < count; ++k) {
    auto block = net.blockRange(k, k + 1);
    BlockRun run = runBlock(*block, x, k > 0);  // warm-up: first-touch allocations, lazy initialisation
    std::vector<double> forward, backward;
    for (int r = 0; r < repeats; ++r) {
      run = runBlock(*block, x, k > 0);
      forward.push_back(run.forwardMs);
      backward.push_back(run.backwardMs);
    }
    times.forwardMs.push_back(median(forward) / samples);
    times.backwardMs.push_back(median(backward) / samples);
    x = run.output;
  }
  return times;
}

std::vector<NodeCosts> gatherNodeCosts(comm::Collectives& world, const BlockTimes& mine, double slowdown,
                                       double memoryLimitBytes) {
  const size_t blocks = mine.forwardMs.size();
  if (mine.backwardMs.size() != blocks) throw InternalError("gatherNodeCosts: forward and backward counts differ");
  // One row per rank: forwards, backwards (slowed as the emulation will slow them), the memory cap.
  auto row = at::empty({static_cast<int64_t>(2 * blocks + 1)}, at::kDouble);
  auto* r = row.data_ptr<double>();
  for (size_t k = 0; k < blocks; ++k) {
    r[k] = mine.forwardMs[k] * slowdown;
    r[blocks + k] = mine.backwardMs[k] * slowdown;
  }
  r[2 * blocks] = memoryLimitBytes;
  std::vector<NodeCosts> nodes;
  for (const auto& gathered : world.allgather(row)) {
    const auto* g = gathered.contiguous().data_ptr<double>();
    NodeCosts node;
    node.forwardMs.assign(g, g + blocks);
    node.backwardMs.assign(g + blocks, g + 2 * blocks);
    node.memoryLimitBytes = g[2 * blocks];
    nodes.push_back(std::move(node));
  }
  return nodes;
}

// The protocol: every ordered pair (a, b) in one order every rank walks, one pair at a time (a barrier
// between pairs, so no other transfer shares the wire). a pings b with one element and b answers: half
// that round trip is the latency. Then a sends `bytes` and b answers with one element: the round trip less
// the ping's is the payload's time on the wire. Blocking sends and receives in the same order on both
// sides of every pair cannot deadlock. a's figures reach every rank through a sum-all-reduce of the table.
LinkCosts measureLinks(comm::Collectives& world, int64_t bytes) {
  constexpr int kTag = 0x11C5;
  const int n = world.size(), me = world.rank();
  auto table = at::zeros({n, n}, at::kDouble);  // bytes per ms, filled by the senders
  auto latencies = at::zeros({1}, at::kDouble);
  auto payload = at::zeros({std::max<int64_t>(1, bytes / 4)}, at::kFloat);
  auto ping = at::zeros({1}, at::kFloat);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      world.barrier();
      if (me == a) {
        auto start = Clock::now();
        world.send(ping, b, kTag);
        world.recv(ping, b, kTag);
        const double roundTripMs = msSince(start);
        start = Clock::now();
        world.send(payload, b, kTag);
        world.recv(ping, b, kTag);
        const double wireMs = std::max(1e-3, msSince(start) - roundTripMs);
        table[a][b] = static_cast<double>(payload.numel() * 4) / wireMs;
        latencies[0] += roundTripMs / 2;
      } else if (me == b) {
        world.recv(ping, a, kTag);
        world.send(ping, a, kTag);
        world.recv(payload, a, kTag);
        world.send(ping, a, kTag);
      }
    }
  }
  world.allreduceSum(table);
  world.allreduceSum(latencies);
  LinkCosts links;
  if (n < 2) return links;
  links.latencyMs = latencies[0].item<double>() / (n * (n - 1));
  // A node's transfer to itself (never planned, but harmless) costs nothing.
  constexpr double kFree = std::numeric_limits<double>::infinity();
  links.bytesPerMs.assign(n, std::vector<double>(n, kFree));
  auto t = table.accessor<double, 2>();
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) links.bytesPerMs[a][b] = a == b ? kFree : t[a][b];
  return links;
}

}  // namespace balancenet::pipeline

// BlockProfiler: per-block times that leave the network as it was, and the collectives that share them.
#include <gtest/gtest.h>

#include <mutex>

#include <ATen/ATen.h>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/pipeline/BlockProfiler.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

std::vector<at::Tensor> snapshot(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> copies;
  for (const auto& t : tensors) copies.push_back(t.defined() ? t.clone() : at::Tensor());
  return copies;
}

void expectUnchanged(const std::vector<at::Tensor>& before, const std::vector<at::Tensor>& after) {
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    ASSERT_EQ(before[i].defined(), after[i].defined()) << i;
    if (before[i].defined()) EXPECT_TRUE(at::equal(before[i], after[i])) << i;
  }
}

// resnet18 has BatchNorm (running statistics move on a training forward) and its blocks need their input's
// gradient; a defined gradient on one parameter must survive, the undefined ones must stay undefined, and
// the default generator (dropout's) must be where it was.
TEST(BlockProfiler, TimesEveryBlockAndLeavesTheNetworkAsItWas) {
  models::ModelOptions options;
  options.name = "resnet18";
  options.width = 0.125;
  auto net = models::buildModel(options).net;
  net->train();
  auto params = net->parameters();
  params[0].mutable_grad() = at::full_like(params[0], 0.5);
  std::vector<at::Tensor> grads;
  for (const auto& p : params) grads.push_back(p.grad());
  const auto paramsBefore = snapshot(params), gradsBefore = snapshot(grads), buffersBefore = snapshot(net->buffers());
  const auto inputs = at::rand({4, 1, 28, 28});
  at::manual_seed(7);
  const auto drawnWithoutProfiling = at::rand({4});

  at::manual_seed(7);
  const auto times = pipeline::profileBlocks(*net, inputs, /*repeats=*/2);
  ASSERT_EQ(times.forwardMs.size(), net->blocks().size());
  ASSERT_EQ(times.backwardMs.size(), net->blocks().size());
  for (size_t k = 0; k < times.forwardMs.size(); ++k) {
    EXPECT_GT(times.forwardMs[k], 0) << k;
    EXPECT_GT(times.backwardMs[k], 0) << k;
  }
  grads.clear();
  for (const auto& p : net->parameters()) grads.push_back(p.grad());
  expectUnchanged(paramsBefore, snapshot(net->parameters()));
  expectUnchanged(gradsBefore, grads);
  expectUnchanged(buffersBefore, snapshot(net->buffers()));
  EXPECT_TRUE(at::equal(at::rand({4}), drawnWithoutProfiling));  // dropout's generator where it was
}

TEST(BlockProfiler, GathersEveryRanksSlowedCostsAndMeasuresEveryLink) {
  std::mutex mutex;
  std::vector<std::vector<pipeline::NodeCosts>> seen(3);
  std::vector<pipeline::LinkCosts> links(3);
  testing::runRanks(3, [&](comm::Communicator& world) {
    const int r = world.rank();
    pipeline::BlockTimes mine{{1.0 + r, 2.0}, {3.0, 4.0 + r}};
    auto nodes = pipeline::gatherNodeCosts(world, mine, /*slowdown=*/r == 2 ? 4.0 : 1.0, /*memory=*/100.0 * r);
    auto measured = pipeline::measureLinks(world, 1 << 16);
    std::lock_guard<std::mutex> lock(mutex);
    seen[r] = std::move(nodes);
    links[r] = std::move(measured);
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(seen[r].size(), 3u);
    EXPECT_DOUBLE_EQ(seen[r][1].forwardMs[0], 2.0);
    EXPECT_DOUBLE_EQ(seen[r][2].forwardMs[0], 12.0);  // (1 + 2) x slowdown 4
    EXPECT_DOUBLE_EQ(seen[r][2].backwardMs[1], 24.0);
    EXPECT_DOUBLE_EQ(seen[r][0].backwardMs[1], 4.0);
    EXPECT_DOUBLE_EQ(seen[r][2].memoryLimitBytes, 200.0);
    ASSERT_EQ(links[r].bytesPerMs.size(), 3u);
    EXPECT_EQ(links[r].bytesPerMs, links[0].bytesPerMs);  // every rank plans from the same table
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        if (a != b) EXPECT_GT(links[r].bytesPerMs[a][b], 0) << a << "->" << b;
    EXPECT_GT(links[r].latencyMs, 0);
  }
}

}  // namespace
}  // namespace balancenet

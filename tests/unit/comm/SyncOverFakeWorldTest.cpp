// Sync strategies over a fake world (testing/FakeCollectives.h): what they compute and what they send, with no
// c10d backend and no other rank. The multi-rank suites check the same strategies over real groups.
#include <gtest/gtest.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include <ATen/ATen.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "testing/FakeCollectives.h"

namespace balancenet::comm {
namespace {

using testing::FakeCollectives;

// Three other ranks, each holding 0.5 in every element of what it sums.
FakeCollectives::OthersSum othersHoldAHalf(int others) {
  return [others](const at::Tensor& mine) { return at::full_like(mine, 0.5 * others); };
}

TEST(SyncOverFakeWorld, TheFlatSyncSendsOneMessageOfGradientsAndScalarsAndUnpacksTheSum) {
  FakeCollectives world(1, 4, othersHoldAHalf(3));
  FlatAllReduceSync sync(world);
  std::vector<at::Tensor> grads{at::arange(6, at::kFloat).view({3, 2}), at::ones({4})};
  auto scalars = at::tensor({2.0f, -1.0f});
  const auto before0 = grads[0].clone(), before1 = grads[1].clone(), scalarsBefore = scalars.clone();

  const auto stats = sync.synchronize(grads, scalars, SyncContext{});

  EXPECT_TRUE(at::allclose(grads[0], before0 + 1.5));
  EXPECT_TRUE(at::allclose(grads[1], before1 + 1.5));
  EXPECT_TRUE(at::allclose(scalars, scalarsBefore + 1.5));
  ASSERT_EQ(world.calls().size(), 1u);
  EXPECT_EQ(world.calls()[0].what, "allreduce");
  EXPECT_EQ(world.calls()[0].numel, 6 + 4 + 2);
  EXPECT_EQ(stats.bytesSent, ringAllReduceWireBytes((6 + 4 + 2) * 4, 4));
  EXPECT_EQ(stats.phases, ringAllReducePhases(4));
}

TEST(SyncOverFakeWorld, TheFlatSyncSumsByTheExchangeItWasGiven) {
  FakeCollectives world(0, 4);
  FlatAllReduceSync sync(world, Exchange::HalvingDoubling);
  std::vector<at::Tensor> grads{at::ones({5})};
  auto scalars = at::ones({1});
  const auto stats = sync.synchronize(grads, scalars, SyncContext{});
  EXPECT_TRUE(at::allclose(grads[0], at::full({5}, 4.0)));  // every rank holds the same: 4 times it
  ASSERT_EQ(world.calls().size(), 1u);
  EXPECT_EQ(world.calls()[0].what, "halving-doubling");
  EXPECT_EQ(stats.phases, exchangePhases(Exchange::HalvingDoubling, 4));
}

// Buckets of one parameter each: backward's hooks start them from the last layer to the first, each as its
// gradient arrives, and the sum lands back in each parameter's gradient.
TEST(SyncOverFakeWorld, BucketsStartDuringBackwardInReverseLayerOrderAndGiveTheSum) {
  torch::manual_seed(3);
  torch::nn::Sequential net(torch::nn::Linear(8, 16), torch::nn::Linear(16, 4));
  const auto input = torch::randn({5, 8});
  auto backward = [&] {
    for (auto& p : net->parameters()) p.mutable_grad() = at::Tensor();
    net->forward(input).square().sum().backward();
  };
  backward();
  std::vector<at::Tensor> alone;
  for (const auto& p : net->parameters()) alone.push_back(p.grad().clone());

  FakeCollectives world(2, 3);  // the others hold the same gradients: the sum is 3 times this rank's
  BucketOptions options;
  options.bucketMb = options.firstBucketMb = 1e-9;  // every parameter fills a bucket by itself
  BucketedAllReduceSync sync(world, namedParameters(*net), options);
  SyncContext context;
  sync.beginStep(context);
  backward();
  std::vector<at::Tensor> grads;
  for (const auto& p : net->parameters()) grads.push_back(p.grad());
  auto scalars = at::zeros({1});
  sync.synchronize(grads, scalars, context);

  for (size_t i = 0; i < grads.size(); ++i) EXPECT_TRUE(at::allclose(grads[i], alone[i] * 3)) << "parameter " << i;
  const auto layout = sync.bucketLayout();
  ASSERT_EQ(layout.size(), grads.size());
  EXPECT_EQ(layout.front(), std::vector<int>{3});  // the last layer's bias goes first
  EXPECT_EQ(sync.bucketsStartedDuringBackward(), static_cast<int>(layout.size()));
  ASSERT_EQ(world.calls().size(), layout.size() + 1);  // the buckets, then the scalars
  for (size_t b = 0; b < layout.size(); ++b)
    EXPECT_EQ(world.calls()[b].numel, grads[layout[b][0]].numel()) << "bucket " << b;
  EXPECT_EQ(world.calls().back().numel, 1);
}

}  // namespace
}  // namespace balancenet::comm

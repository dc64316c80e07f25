// Wait-free backprop: bucketed, overlapped all-reduce gives the flat all-reduce's result (and so the
// single-process gradient), buckets follow backward order, and they really start during backward.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

trainer::TrainerOptions sgd(int64_t steps, int64_t globalBatch) { return testing::sgdRun(steps, globalBatch, 11); }

std::vector<at::Tensor> train(const std::string& model, const Split& split, comm::BucketOptions buckets,
                              const testing::ImageSet& data) {
  testing::DistributedRun run;
  run.world = split.worldSize();
  run.allocator = [split] { return std::make_unique<orchestrator::StaticAllocator>(split); };
  run.sync = [buckets](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
    return std::make_unique<comm::BucketedAllReduceSync>(comm, comm::namedParameters(net), buckets);
  };
  return testing::distributedTraining(testing::comparisonModel(model), sgd(4, split.total()), data, run);
}

TEST(BucketedAllReduceSync, OverlappedAndNotMatchSingleProcessWithUnequalSplit) {
  const auto data = testing::syntheticDataset(200, 5);
  const Split split{{5, 1, 26}};
  const auto reference = testing::referenceTraining(testing::comparisonModel("cnn"), sgd(4, split.total()), data);
  comm::BucketOptions tiny;  // many buckets, so the in-order start and the hooks are exercised
  tiny.bucketMb = 0.01;
  tiny.firstBucketMb = 0.005;
  const auto overlapped = train("cnn", split, tiny, data);
  tiny.overlap = false;
  const auto after = train("cnn", split, tiny, data);
  const double dOverlap = testing::maxAbsDifference(overlapped, reference);
  const double dAfter = testing::maxAbsDifference(after, reference);
  const double bound = testing::exactnessBound(reference, 4);
  std::printf("max |param difference| vs single process: overlapped %.3g, after backward %.3g (float bound %.3g)\n",
              dOverlap, dAfter, bound);
  EXPECT_LT(dOverlap, bound);
  EXPECT_LT(dAfter, bound);
  EXPECT_LT(testing::maxAbsDifference(overlapped, after), bound);
}

TEST(BucketedAllReduceSync, LayoutFollowsBackwardOrderWithASmallFirstBucket) {
  testing::runRanks(1, [](comm::Communicator& comm) {
    auto built = models::buildModel(testing::comparisonModel("alexnet"));
    const auto params = comm::namedParameters(*built.net);
    comm::BucketOptions options;
    options.bucketMb = 0.5;
    options.firstBucketMb = 0.1;
    comm::BucketedAllReduceSync sync(comm, params, options);
    const auto layout = sync.bucketLayout();
    ASSERT_GT(layout.size(), 2u);
    std::vector<int> order;
    for (const auto& bucket : layout) order.insert(order.end(), bucket.begin(), bucket.end());
    ASSERT_EQ(order.size(), params.size());
    for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int>(params.size() - 1 - i));
    auto mb = [&](const std::vector<int>& bucket) {
      double bytes = 0;
      for (int p : bucket) bytes += params[p].tensor.numel() * 4.0;
      return bytes / (1024.0 * 1024.0);
    };
    // DDP's rule: a bucket closes with the tensor that brings it to its cap (the first 0.1 MB, then
    // 0.5 MB), so every bucket but the last reaches its cap, and without its last tensor it was under it.
    for (size_t b = 0; b < layout.size(); ++b) {
      const double cap = b == 0 ? 0.1 : 0.5;
      std::vector<int> allButLast(layout[b].begin(), layout[b].end() - 1);
      EXPECT_LT(mb(allButLast), cap) << b;
      if (b + 1 < layout.size()) {
        EXPECT_GE(mb(layout[b]), cap) << b;
      }
    }
  });
}

TEST(BucketedAllReduceSync, BucketsStartDuringBackwardAndSumLikeTheFlatSync) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    at::manual_seed(3);  // same weights on both ranks; different data per rank below
    auto built = models::buildModel(testing::comparisonModel("cnn"));
    auto& net = *built.net;
    comm::BucketOptions options;
    options.bucketMb = 0.005;
    options.firstBucketMb = 0.001;
    comm::BucketedAllReduceSync sync(comm, comm::namedParameters(net), options);
    const int buckets = static_cast<int>(sync.bucketLayout().size());
    ASSERT_GT(buckets, 2);

    at::manual_seed(100 + comm.rank());
    auto x = at::randn({4 + 3 * comm.rank(), 1, 28, 28});
    auto y = at::randint(10, {x.size(0)}, at::kLong);
    auto backward = [&] {
      net.zero_grad();
      at::cross_entropy_loss(net.forward(x), y, {}, at::Reduction::Sum).backward();
    };
    // Expected: each rank's gradient summed by the flat all-reduce.
    backward();
    std::vector<at::Tensor> expected;
    for (auto& p : net.parameters()) expected.push_back(p.grad().clone());
    comm::FlatAllReduceSync flat(comm);
    auto s0 = at::zeros({1});
    flat.synchronize(expected, s0, {});

    Timeline timeline(comm.rank());
    comm::SyncContext context;
    context.timeline = &timeline;
    sync.beginStep(context);
    backward();
    EXPECT_EQ(sync.bucketsStartedDuringBackward(), buckets);
    std::vector<at::Tensor> grads;
    for (auto& p : net.parameters()) grads.push_back(p.grad());
    auto scalars = at::full({1}, float(comm.rank() + 1));
    const auto stats = sync.synchronize(grads, scalars, context);
    EXPECT_LT(testing::maxAbsDifference(grads, expected), testing::exactnessBound(expected, 1));
    EXPECT_EQ(scalars.item<float>(), 3.0f);
    int64_t numel = 1;  // the scalar
    for (auto& p : net.parameters()) numel += p.numel();
    EXPECT_EQ(stats.bytesSent, numel * 4);  // ring, 2 ranks: once the payload
    int64_t perLayer = 0;
    for (const auto& l : stats.layers) perLayer += l.bytesSent;
    EXPECT_EQ(perLayer, (numel - 1) * 4);
    EXPECT_EQ(timeline.size(), static_cast<size_t>(2 * buckets));  // a wait and a message per bucket
    EXPECT_EQ(stats.phases, (buckets + 1) * 2);  // a 2-rank ring all-reduce per bucket and the scalars': 2 hops
  });
}

TEST(BucketedAllReduceSync, ParametersBackwardDoesNotReachAreSummedAsZeros) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    auto used = at::ones({3}).requires_grad_();
    auto unused = at::ones({2}).requires_grad_();
    comm::ParameterList params{{"a.weight", used}, {"b.weight", unused}};
    comm::BucketOptions options;
    options.firstBucketMb = 1e-6;  // one tensor per bucket
    comm::BucketedAllReduceSync sync(comm, params, options);
    sync.beginStep({});
    (used * float(comm.rank() + 1)).sum().backward();
    unused.mutable_grad() = at::zeros({2});
    std::vector<at::Tensor> grads{used.grad(), unused.grad()};
    auto scalars = at::zeros({1});
    sync.synchronize(grads, scalars, {});
    EXPECT_TRUE(at::equal(used.grad(), at::full({3}, 3.0f)));
    EXPECT_TRUE(at::equal(unused.grad(), at::zeros({2})));
  });
}

}  // namespace
}  // namespace balancenet

// Sufficient factors (sfb) and the hybrid choice: with unequal batches, the rebuilt gradients equal the
// all-reduced ones, training matches one process, factors leave during backward, and hybrid re-decides.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include <ATen/ATen.h>

#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/SufficientFactorSync.h"
#include "balancenet/core/Error.h"
#include "testing/ChangingAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

// The model with its fully connected layers capturing factors (what the worker builds for sfb and hybrid).
models::BuiltModel factored(const std::string& name) {
  auto options = testing::comparisonModel(name);
  options.linear = comm::factorLinearFactory();
  return models::buildModel(options);
}

comm::FactorSyncOptions factorOptions(bool hybrid, const Split& split) {
  comm::FactorSyncOptions o;
  o.hybrid = hybrid;
  o.initialBatches = split.batches;
  o.buckets.firstBucketMb = 0.01;  // several buckets for the convolutions, interleaved with the factors
  o.buckets.bucketMb = 0.05;
  return o;
}

std::vector<at::Tensor> gradsOf(models::Network& net) {
  std::vector<at::Tensor> out;
  for (auto& p : net.parameters()) out.push_back(p.grad());
  return out;
}

struct GradientCheck {
  double maxDifference = 0;                 // over ranks and parameters
  double bound = 0;                         // the float error one gradient's reordered sums explain
  std::vector<comm::FcDecision> decisions;  // rank 0's
};

// One step on rank-sized slices of the same 32 samples: the flat all-reduce of a plain model's gradients
// against the factor strategy's gradients of a FactorLinear model with the same weights.
GradientCheck compareWithAllReduce(const std::string& model, bool hybrid, const Split& split) {
  const auto data = testing::syntheticDataset(split.total(), 9);
  GradientCheck result;
  std::mutex resultMutex;
  testing::runRanks(split.worldSize(), [&](comm::Communicator& comm) {
    models::BuiltModel plain, withFactors;
    {
      static std::mutex rngMutex;  // the thread ranks share the global RNG
      std::lock_guard<std::mutex> lock(rngMutex);
      at::manual_seed(5);
      plain = models::buildModel(testing::comparisonModel(model));
      at::manual_seed(5);
      withFactors = factored(model);
    }
    std::vector<int64_t> idx(split.batches[comm.rank()]);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = split.offsetOf(comm.rank()) + static_cast<int64_t>(i);
    const auto x = data.imagesAt(idx);
    const auto y = data.labelsAt(idx);
    auto backward = [&](models::Network& net) {
      net.zero_grad();
      (at::cross_entropy_loss(net.forward(x), y, {}, at::Reduction::Sum) / double(split.total())).backward();
    };
    backward(*plain.net);
    auto expected = gradsOf(*plain.net);
    auto noScalars = at::zeros({1});
    comm::FlatAllReduceSync(comm).synchronize(expected, noScalars, {});

    comm::SufficientFactorSync sync(comm, *withFactors.net, factorOptions(hybrid, split));
    comm::SyncContext context;
    context.batches = split.batches;
    context.localBatch = split.batches[comm.rank()];
    sync.beginStep(context);
    backward(*withFactors.net);
    EXPECT_EQ(sync.exchangesStartedDuringBackward(), static_cast<int>(sync.decisions().size()));
    auto grads = gradsOf(*withFactors.net);
    auto scalars = at::full({1}, 1.0f);
    const auto stats = sync.synchronize(grads, scalars, context);
    EXPECT_EQ(scalars.item<float>(), float(split.worldSize()));
    const int64_t k = split.batches[comm.rank()], others = split.total() - k;
    // Phases: a P-1 hop ring all-gather per factor layer, 2(P-1) per all-reduced one, and the rest's buckets
    // and scalars (at least one all-reduce: the scalars'): a lower bound that fails if the factor layers count none.
    const int64_t world = split.worldSize();
    int64_t factorPhases = 0;
    for (const auto& d : sync.decisions()) factorPhases += d.sfb ? world - 1 : 2 * (world - 1);
    EXPECT_GE(stats.phases, factorPhases + 2 * (world - 1));
    EXPECT_EQ((stats.phases - factorPhases) % (2 * (world - 1)), 0);
    for (const auto& d : sync.decisions()) {
      auto row =
          std::find_if(stats.layers.begin(), stats.layers.end(), [&](auto& l) { return l.layer == d.shape.layer; });
      ASSERT_NE(row, stats.layers.end()) << d.shape.layer;
      EXPECT_EQ(row->method, d.sfb ? "sfb" : "allreduce");
      const int64_t rowBytes = (d.shape.out + d.shape.in) * 4;
      if (d.sfb) {
        EXPECT_EQ(row->bytesSent, (split.worldSize() - 1) * k * rowBytes) << d.shape.layer;
        EXPECT_EQ(row->bytesReceived, others * rowBytes) << d.shape.layer;
      }
    }
    const double diff = testing::maxAbsDifference(grads, expected);
    const double bound = testing::exactnessBound(expected, 1);
    std::lock_guard<std::mutex> lock(resultMutex);
    result.maxDifference = std::max(result.maxDifference, diff);
    result.bound = std::max(result.bound, bound);  // the same on every rank: the all-reduced gradients
    if (comm.rank() == 0) result.decisions = sync.decisions();
  });
  return result;
}

int sfbLayers(const std::vector<comm::FcDecision>& decisions) {
  return static_cast<int>(std::count_if(decisions.begin(), decisions.end(), [](auto& d) { return d.sfb; }));
}

class FactorGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FactorGradientTest, SfbGradientEqualsAllReducedWithUnequalBatches) {
  const auto check = compareWithAllReduce(GetParam(), /*hybrid=*/false, Split{{5, 1, 26}});
  std::printf("[%s] sfb: max |gradient difference| vs all-reduce = %.3g (float bound %.3g)\n", GetParam().c_str(),
              check.maxDifference, check.bound);
  EXPECT_EQ(check.decisions.size(), 3u);
  EXPECT_EQ(sfbLayers(check.decisions), 3);
  EXPECT_LT(check.maxDifference, check.bound);
}

TEST_P(FactorGradientTest, HybridGradientEqualsAllReducedWithMixedChoices) {
  const auto check = compareWithAllReduce(GetParam(), /*hybrid=*/true, Split{{5, 1, 26}});
  std::printf("[%s] hybrid (%d of %zu layers sfb): max |gradient difference| vs all-reduce = %.3g (float bound %.3g)\n",
              GetParam().c_str(), sfbLayers(check.decisions), check.decisions.size(), check.maxDifference, check.bound);
  // Both kinds of layer are exercised: the last (10 outputs) layer is cheaper all-reduced, the first SFB.
  EXPECT_GT(sfbLayers(check.decisions), 0);
  EXPECT_LT(sfbLayers(check.decisions), static_cast<int>(check.decisions.size()));
  EXPECT_LT(check.maxDifference, check.bound);
}

INSTANTIATE_TEST_SUITE_P(Models, FactorGradientTest, ::testing::Values("mlp", "alexnet"));

// The max |param difference| vs one process after `steps` steps, over the float bound of those steps: below 1 is exact.
double trainingDifferenceOverBound(const std::string& model, bool hybrid, const std::vector<Split>& splits,
                                   int64_t steps, bool overlap = true) {
  const auto data = testing::syntheticDataset(200, 6);
  const auto options = testing::sgdRun(steps, splits.front().total(), 13);
  testing::DistributedRun run;
  run.world = splits.front().worldSize();
  run.allocator = [splits] { return std::make_unique<testing::ChangingAllocator>(splits); };
  run.linear = comm::factorLinearFactory();
  run.sync = [&](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
    auto o = factorOptions(hybrid, splits.front());
    o.buckets.overlap = overlap;
    return std::make_unique<comm::SufficientFactorSync>(comm, net, o);
  };
  const auto dist = testing::distributedTraining(testing::comparisonModel(model), options, data, run);
  const auto reference = testing::referenceTraining(testing::comparisonModel(model), options, data);
  const double diff = testing::maxAbsDifference(dist, reference);
  const double bound = testing::exactnessBound(reference, steps);
  std::printf("[%s %s%s] max |param difference| vs single process after %lld steps = %.3g (float bound %.3g)\n",
              model.c_str(), hybrid ? "hybrid" : "sfb", overlap ? "" : " no-overlap", static_cast<long long>(steps),
              diff, bound);
  return diff / bound;
}

TEST(SufficientFactorSync, SfbTrainingMatchesSingleProcess) {
  EXPECT_LT(trainingDifferenceOverBound("alexnet", false, {Split{{5, 1, 26}}}, 3), 1);
}

TEST(SufficientFactorSync, HybridTrainingWithChangingSplitMatchesSingleProcess) {
  EXPECT_LT(trainingDifferenceOverBound("mlp", true, {Split{{5, 1, 26}}, Split{{2, 2, 28}}, Split{{11, 11, 10}}}, 5),
            1);
}

TEST(SufficientFactorSync, NoOverlapSendsAfterBackwardWithTheSameResult) {
  EXPECT_LT(trainingDifferenceOverBound("cnn", true, {Split{{7, 25}}}, 3, /*overlap=*/false), 1);
}

TEST(SufficientFactorSync, HybridRedecidesWhenTheSplitChangesAndExplainsIt) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    auto built = factored("mlp");
    comm::SufficientFactorSync sync(comm, *built.net, factorOptions(true, Split{{1, 1}}));
    // mlp at width 0.25: 784->64, 64->32, 32->10. With K = 1 every layer is cheaper by factors.
    EXPECT_EQ(sfbLayers(sync.decisions()), 3);
    const auto text = sync.explain();
    EXPECT_NE(text.find("layers.1"), std::string::npos) << text;
    EXPECT_NE(text.find("64x784"), std::string::npos) << text;
    EXPECT_NE(text.find("1,1"), std::string::npos) << text;
    comm::SyncContext context;
    context.batches = {200, 56};  // large batches: every layer is cheaper all-reduced
    sync.beginStep(context);
    EXPECT_EQ(sfbLayers(sync.decisions()), 0);
    EXPECT_NE(sync.explain().find("200,56"), std::string::npos);
  });
}

TEST(SufficientFactorSync, WithoutTheSplitSynchronizeFailsClearly) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    auto built = factored("mlp");
    comm::SufficientFactorSync sync(comm, *built.net, {});
    sync.beginStep({});
    built.net->forward(at::ones({2, 1, 28, 28})).sum().backward();
    auto grads = gradsOf(*built.net);
    auto scalars = at::zeros({1});
    EXPECT_THROW(sync.synchronize(grads, scalars, {}), RuntimeFailure);
  });
}

TEST(SufficientFactorSync, ExchangesAreOnTheTimeline) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    auto built = factored("mlp");
    comm::SufficientFactorSync sync(comm, *built.net, factorOptions(false, Split{{3, 4}}));
    Timeline timeline(comm.rank());
    comm::SyncContext context;
    context.batches = {3, 4};
    context.timeline = &timeline;
    sync.beginStep(context);
    const auto x = at::ones({context.batches[comm.rank()], 1, 28, 28});
    built.net->forward(x).sum().backward();
    auto grads = gradsOf(*built.net);
    auto scalars = at::zeros({1});
    sync.synchronize(grads, scalars, context);
    EXPECT_EQ(timeline.size(), 6u);  // a wait and a message per layer; the mlp has nothing else
  });
}

}  // namespace
}  // namespace balancenet

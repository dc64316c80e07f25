// --accumulate and --clip-grad-norm keep the engine's promise: unequal shares, micro-steps and clipping
// still train exactly like one process on the whole batch (clipped by libtorch's clip_grad_norm_).
#include <gtest/gtest.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet {
namespace {

const Split kSplit{{5, 11, 16}};

testing::DistributedRun runWith(bool buckets) {
  testing::DistributedRun run{kSplit.worldSize(),
                              [] { return std::make_unique<orchestrator::StaticAllocator>(kSplit); }};
  if (buckets) {
    run.sync = [](comm::Communicator& comm, models::Network& net) {
      comm::BucketOptions tiny;  // many buckets, overlapped with backward: the hooks are exercised
      tiny.bucketMb = 0.01;
      tiny.firstBucketMb = 0.005;
      return std::make_unique<comm::BucketedAllReduceSync>(comm, comm::namedParameters(net), tiny);
    };
  }
  return run;
}

TEST(GradientShaping, AccumulatedMicroStepsMatchSingleProcess) {
  const auto data = testing::syntheticDataset(200, 5);
  auto options = testing::comparisonOptions("sgd", 4, kSplit.total(), 5e-4);
  const auto reference = testing::referenceTraining(testing::comparisonModel("cnn"), options, data);
  options.accumulate = 3;  // shares 5, 11, 16 in 3 micro-steps each
  for (bool buckets : {false, true}) {
    const auto accumulated =
        testing::distributedTraining(testing::comparisonModel("cnn"), options, data, runWith(buckets));
    const double diff = testing::maxAbsDifference(accumulated, reference);
    const double bound = testing::exactnessBound(reference, options.steps);
    std::printf("accumulate 3 (%s): max |param difference| vs single process %.3g (float bound %.3g)\n",
                buckets ? "buckets" : "flat", diff, bound);
    EXPECT_LT(diff, bound) << (buckets ? "bucketed" : "flat");
  }
}

// --accumulate auto: each rank cuts its share into the passes its memory holds (here 2, 3 and 16 samples a pass:
// shares 5, 11, 16 in 3, 4 and 1 micro-steps), overlapping backward where it takes one pass and not where it takes
// several, in one exchange; the sum is still the whole batch's.
TEST(GradientShaping, PerWorkerMicroStepsFromMemoryMatchSingleProcess) {
  const auto data = testing::syntheticDataset(200, 7);
  auto options = testing::comparisonOptions("sgd", 4, kSplit.total(), 5e-4);
  const auto reference = testing::referenceTraining(testing::comparisonModel("cnn"), options, data);
  options.accumulate = trainer::kAccumulateAuto;
  auto run = runWith(/*buckets=*/true);
  run.samplesPerPass = [](int rank) { return std::vector<int64_t>{2, 3, 16}.at(rank); };
  const auto accumulated = testing::distributedTraining(testing::comparisonModel("cnn"), options, data, run);
  const double diff = testing::maxAbsDifference(accumulated, reference);
  const double bound = testing::exactnessBound(reference, options.steps);
  std::printf("accumulate auto (passes of 2, 3, 16): max |param difference| vs single process %.3g (bound %.3g)\n",
              diff, bound);
  EXPECT_LT(diff, bound);
}

TEST(GradientShaping, ClippedGlobalNormMatchesLibtorchClipping) {
  const auto data = testing::syntheticDataset(200, 6);
  auto options = testing::comparisonOptions("sgd", 4, kSplit.total(), 0.0);
  const auto unclipped = testing::referenceTraining(testing::comparisonModel("mlp"), options, data);
  options.clipGradNorm = 0.05;  // far below the mlp's gradient norm: every step is clipped
  const auto reference = testing::referenceTraining(testing::comparisonModel("mlp"), options, data);
  const auto clipped = testing::distributedTraining(testing::comparisonModel("mlp"), options, data, runWith(false));
  const double diff = testing::maxAbsDifference(clipped, reference);
  const double effect = testing::maxAbsDifference(reference, unclipped);
  const double bound = testing::exactnessBound(reference, options.steps);
  std::printf(
      "clip 0.05: max |param difference| vs clipped single process %.3g (float bound %.3g; clipping moved it "
      "%.3g)\n",
      diff, bound, effect);
  EXPECT_LT(diff, bound);
  EXPECT_GT(effect, 100 * diff);  // the clipping took effect, so the agreement above says something
  EXPECT_GT(effect, bound) << "clipping must move the parameters by more than float error, or not clipping passes";
}

}  // namespace
}  // namespace balancenet

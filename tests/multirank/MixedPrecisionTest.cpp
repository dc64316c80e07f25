// --precision bf16 and fp16: ranks with unequal shares train like one process at the same precision (autocast on
// both sides; the weights, the optimiser and the sum across ranks in float32), within mixedPrecisionBound
// (testing/FloatBound.cpp derives it). SGD only: Adam divides by the gradient's own size, so a gradient that cancels
// to nearly zero has a relative error no eps-scaled bound covers (FloatBound.cpp says the same of float32).
#include <gtest/gtest.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet {
namespace {

struct PrecisionCase {
  std::string name;
  std::string model;
  precision::Precision precision;
  std::vector<int64_t> split;
  std::string optimizer;
  // flat, or bucketed: hooks during backward, with fp16's scaled gradients in them. (Sufficient factors are refused
  // with --precision: the factor layers' products are not the autocast ones, 0.00085 from one fp16 process where
  // the bound is 0.0003.)
  std::string sync = "flat";
};

// The exchange under test on every rank of `run`.
void useSync(testing::DistributedRun& run, const std::string& sync) {
  if (sync == "bucketed") {
    run.sync = [](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
      comm::BucketOptions tiny;  // several buckets, started by the hooks as backward delivers them
      tiny.bucketMb = 0.01;
      tiny.firstBucketMb = 0.005;
      return std::make_unique<comm::BucketedAllReduceSync>(comm, comm::namedParameters(net), tiny);
    };
  }
}

double epsOf(precision::Precision p) { return p == precision::Precision::Bf16 ? 0x1p-7 : 0x1p-10; }

class MixedPrecisionTest : public ::testing::TestWithParam<PrecisionCase> {};

TEST_P(MixedPrecisionTest, UnequalSharesMatchOneProcessAtTheSamePrecision) {
  const PrecisionCase& c = GetParam();
  const auto train = testing::syntheticDataset(300, 3);
  auto options = testing::comparisonOptions(c.optimizer, 5, Split{c.split}.total(), 0.0);
  options.precision = c.precision;
  const auto model = testing::comparisonModel(c.model);
  const Split split{c.split};
  testing::DistributedRun run{split.worldSize(),
                              [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  useSync(run, c.sync);
  auto dist = testing::distributedTraining(model, options, train, run);
  const auto ref = testing::referenceTraining(model, options, train);
  auto notTrained = options;
  notTrained.steps = 0;
  const auto start = testing::referenceTraining(model, notTrained, train);
  auto fp32 = options;
  fp32.precision = precision::Precision::Fp32;
  const auto fullPrecision = testing::referenceTraining(model, fp32, train);

  const double diff = testing::maxAbsDifference(dist, ref);
  const double bound = testing::mixedPrecisionBound(ref, start, epsOf(c.precision));
  const double fromFp32 = testing::maxAbsDifference(dist, fullPrecision);
  std::printf("[%s %s] split %s: max |param difference| vs one %s process = %.3g (bound %.3g); vs fp32 %.3g\n",
              c.name.c_str(), c.sync.c_str(), split.str().c_str(), precision::precisionName(c.precision), diff, bound,
              fromFp32);
  EXPECT_LT(diff, bound);
  // The run did compute in the low type: it is farther from the fp32 process than float32's order explains.
  EXPECT_GT(fromFp32, testing::exactnessBound(fullPrecision, options.steps));
}

INSTANTIATE_TEST_SUITE_P(
    Precisions, MixedPrecisionTest,
    ::testing::Values(PrecisionCase{"cnn_bf16", "cnn", precision::Precision::Bf16, {12, 4}, "sgd"},
                      PrecisionCase{"mlp_bf16_3", "mlp", precision::Precision::Bf16, {5, 11, 16}, "sgd"},
                      PrecisionCase{"mlp_fp16", "mlp", precision::Precision::Fp16, {12, 4}, "sgd"},
                      PrecisionCase{
                          "cnn_fp16_bucketed", "cnn", precision::Precision::Fp16, {12, 4}, "sgd", "bucketed"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace balancenet

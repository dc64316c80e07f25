// --grad-compress bf16 and fp16: ranks with unequal shares whose gradients cross the wire in fewer bits, with error
// feedback, train like one float32 process within the wire type's bound (testing/FloatBound.cpp), through the flat
// ring and the overlapped buckets; none is today's exact exchange.
#include <gtest/gtest.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet {
namespace {

using compression::GradCompression;

struct CompressionCase {
  std::string name;
  std::string model;
  GradCompression compression;
  std::vector<int64_t> split;
  bool buckets;  // the overlapped buckets (several, started by the hooks); false: the flat ring
};

std::vector<at::Tensor> trainCompressed(const CompressionCase& c, const trainer::TrainerOptions& options,
                                        const testing::ImageSet& data) {
  const Split split{c.split};
  testing::DistributedRun run{split.worldSize(),
                              [split] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.sync = [&c](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
    if (!c.buckets)
      return std::make_unique<comm::FlatAllReduceSync>(comm, comm::Exchange::Ring, comm::ParameterList{},
                                                       c.compression);
    comm::BucketOptions tiny;
    tiny.bucketMb = 0.01;
    tiny.firstBucketMb = 0.005;
    tiny.compression = c.compression;
    return std::make_unique<comm::BucketedAllReduceSync>(comm, comm::namedParameters(net), tiny);
  };
  return testing::distributedTraining(testing::comparisonModel(c.model), options, data, run);
}

class CompressedSyncTest : public ::testing::TestWithParam<CompressionCase> {};

TEST_P(CompressedSyncTest, UnequalSharesMatchOneProcessWithinTheWireTypesBound) {
  const CompressionCase& c = GetParam();
  const auto data = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 5, Split{c.split}.total(), 0.0);
  const auto model = testing::comparisonModel(c.model);
  const auto dist = trainCompressed(c, options, data);
  const auto ref = testing::referenceTraining(model, options, data);
  auto notTrained = options;
  notTrained.steps = 0;
  const auto start = testing::referenceTraining(model, notTrained, data);
  const double eps = c.compression == GradCompression::Bf16 ? 0x1p-7 : 0x1p-10;
  const double diff = testing::maxAbsDifference(dist, ref);
  const double bound = testing::mixedPrecisionBound(ref, start, eps);
  std::printf("[%s] split %s, %s on the wire: max |param difference| vs one fp32 process = %.3g (bound %.3g)\n",
              c.name.c_str(), Split{c.split}.str().c_str(), compression::gradCompressionName(c.compression), diff,
              bound);
  EXPECT_LT(diff, bound);
  // The wire did carry fewer bits: ten times farther from the process than the exact exchange ends.
  auto exact = c;
  exact.compression = GradCompression::None;
  EXPECT_GT(diff, 10 * testing::maxAbsDifference(trainCompressed(exact, options, data), ref));
}

INSTANTIATE_TEST_SUITE_P(
    WireTypes, CompressedSyncTest,
    ::testing::Values(CompressionCase{"flat_bf16", "mlp", GradCompression::Bf16, {12, 4}, false},
                      CompressionCase{"buckets_fp16_3", "mlp", GradCompression::Fp16, {5, 11, 16}, true},
                      CompressionCase{"buckets_bf16_cnn", "cnn", GradCompression::Bf16, {12, 4}, true}),
    [](const auto& info) { return info.param.name; });

// none is the exchange as it was: the same bits as a sync built without the option.
TEST(CompressedSync, NoneIsTheExactExchangeBitForBit) {
  const auto data = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 3, 16, 0.0);
  const auto none = trainCompressed({"none", "mlp", GradCompression::None, {12, 4}, true}, options, data);
  const Split split{{12, 4}};
  testing::DistributedRun run{2, [split] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.sync = [](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
    comm::BucketOptions tiny;
    tiny.bucketMb = 0.01;
    tiny.firstBucketMb = 0.005;
    return std::make_unique<comm::BucketedAllReduceSync>(comm, comm::namedParameters(net), tiny);
  };
  const auto plain = testing::distributedTraining(testing::comparisonModel("mlp"), options, data, run);
  EXPECT_EQ(testing::maxAbsDifference(none, plain), 0.0);
}

}  // namespace
}  // namespace balancenet

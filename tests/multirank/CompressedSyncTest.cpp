// --grad-compress: ranks with unequal shares whose gradients cross the wire in fewer bits, with error feedback.
// bf16 and fp16 train like one float32 process within the wire type's bound (testing/FloatBound.cpp); powersgd
// trains like one process running PowerSGD on the whole batch (its factors are linear in the gradient); int8's sum is
// within its two quantisation steps and the same bits on every rank; all through the flat ring and the overlapped
// buckets. none is today's exact exchange.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

using compression::CompressionOptions;
using compression::GradCompression;

CompressionOptions kindOf(GradCompression kind, int rank = 1) {
  CompressionOptions options;
  options.kind = kind;
  options.rank = rank;
  return options;
}

struct CompressionCase {
  std::string name;
  std::string model;
  CompressionOptions compression;
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
      return std::make_unique<comm::FlatAllReduceSync>(comm, comm::Exchange::Ring, comm::namedParameters(net),
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
  const double eps = c.compression.kind == GradCompression::Bf16 ? 0x1p-7 : 0x1p-10;
  const double diff = testing::maxAbsDifference(dist, ref);
  const double bound = testing::mixedPrecisionBound(ref, start, eps);
  std::printf("[%s] split %s, %s on the wire: max |param difference| vs one fp32 process = %.3g (bound %.3g)\n",
              c.name.c_str(), Split{c.split}.str().c_str(), compression::gradCompressionName(c.compression).c_str(),
              diff, bound);
  EXPECT_LT(diff, bound);
  // The wire did carry fewer bits: ten times farther from the process than the exact exchange ends.
  auto exact = c;
  exact.compression = {};
  EXPECT_GT(diff, 10 * testing::maxAbsDifference(trainCompressed(exact, options, data), ref));
}

INSTANTIATE_TEST_SUITE_P(
    WireTypes, CompressedSyncTest,
    ::testing::Values(CompressionCase{"flat_bf16", "mlp", kindOf(GradCompression::Bf16), {12, 4}, false},
                      CompressionCase{"buckets_fp16_3", "mlp", kindOf(GradCompression::Fp16), {5, 11, 16}, true},
                      CompressionCase{"buckets_bf16_cnn", "cnn", kindOf(GradCompression::Bf16), {12, 4}, true}),
    [](const auto& info) { return info.param.name; });

// none is the exchange as it was: the same bits as a sync built without the option.
TEST(CompressedSync, NoneIsTheExactExchangeBitForBit) {
  const auto data = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 3, 16, 0.0);
  const auto none = trainCompressed({"none", "mlp", {}, {12, 4}, true}, options, data);
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

// One process running PowerSGD on the whole batch: the gradient through the compressed exchange in a group of one,
// which sums nothing, so the factors are the whole batch's own.
class AloneCompressedSync : public comm::GradientSync {
 public:
  AloneCompressedSync(comm::Communicator& comm, const comm::ParameterList& params, const CompressionOptions& options)
      : exchange_(comm::makeBufferAllReduce(comm, options, comm::partsOf(params), at::TensorOptions())) {}
  comm::SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                              const comm::SyncContext& context) override {
    comm::packGradients(grads, scalars, buffer_);
    auto values = buffer_.narrow(0, 0, buffer_.numel() - scalars.numel());
    exchange_->beginStep(context.step);
    exchange_->start(values);
    exchange_->finish(values, nullptr, "alone");
    comm::unpackGradients(buffer_, grads, scalars);
    return {};
  }

 private:
  std::unique_ptr<comm::BufferAllReduce> exchange_;
  at::Tensor buffer_;
};

std::vector<at::Tensor> trainAlone(const CompressionCase& c, const trainer::TrainerOptions& options,
                                   const testing::ImageSet& data) {
  const Split whole{{Split{c.split}.total()}};
  testing::DistributedRun run{1, [whole] { return std::make_unique<orchestrator::StaticAllocator>(whole); }};
  run.sync = [&c](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
    return std::make_unique<AloneCompressedSync>(comm, comm::namedParameters(net), c.compression);
  };
  return testing::distributedTraining(testing::comparisonModel(c.model), options, data, run);
}

// P = (M + e) Q and Q' = (M + e)^T orth(P) are linear in M and the ranks' residuals sum to the one process's, so
// unequal shares train as one process running PowerSGD does: the only difference is float32's summation order,
// which orth() and the products carry on (kPowerSgdStepUlps below). Far from the exact exchange all the same.
class PowerSgdSyncTest : public ::testing::TestWithParam<CompressionCase> {};

// Reordered sums move a step by kReorderedStepUlps (FloatBound.cpp); PowerSGD adds three rounded products per
// matrix on that path (P, Q', P Q'^T) and a normalisation: four times as many.
constexpr double kPowerSgdStepUlps = 4 * testing::kReorderedStepUlps;

TEST_P(PowerSgdSyncTest, UnequalSharesTrainAsOneProcessRunningPowerSgd) {
  const CompressionCase& c = GetParam();
  const auto data = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 5, Split{c.split}.total(), 0.0);
  const auto dist = trainCompressed(c, options, data);
  const auto alone = trainAlone(c, options, data);
  const auto exact = testing::referenceTraining(testing::comparisonModel(c.model), options, data);
  const double diff = testing::maxAbsDifference(dist, alone);
  const double bound = testing::exactnessBound(alone, options.steps, kPowerSgdStepUlps);
  const double lossy = testing::maxAbsDifference(dist, exact);
  std::printf(
      "[%s] split %s, %s: max |param difference| vs one PowerSGD process = %.3g (bound %.3g); vs the exact "
      "process %.3g\n",
      c.name.c_str(), Split{c.split}.str().c_str(), compression::gradCompressionName(c.compression).c_str(), diff,
      bound, lossy);
  EXPECT_LT(diff, bound);
  EXPECT_GT(lossy, 100 * diff);  // the factors did drop something: this is not the exact exchange
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, PowerSgdSyncTest,
    ::testing::Values(CompressionCase{"flat_mlp", "mlp", kindOf(GradCompression::PowerSgd), {12, 4}, false},
                      CompressionCase{
                          "buckets_mlp_rank2", "mlp", kindOf(GradCompression::PowerSgd, 2), {5, 11, 16}, true},
                      CompressionCase{"buckets_cnn", "cnn", kindOf(GradCompression::PowerSgd), {12, 4}, true}),
    [](const auto& info) { return info.param.name; });

// int8: what the two phases lose is below one quantisation step of each rank's largest gradient and one of the sum's;
// with shares 12,4 the run stays within the bound for an eps of 2^-7 (two half steps of 1/127, as bf16's eps).
TEST(CompressedSync, Int8SharesTrainWithinTwoQuantisationSteps) {
  const CompressionCase c{"int8", "mlp", kindOf(GradCompression::Int8), {12, 4}, true};
  const auto data = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 5, 16, 0.0);
  const auto model = testing::comparisonModel(c.model);
  const auto dist = trainCompressed(c, options, data);
  const auto ref = testing::referenceTraining(model, options, data);
  auto notTrained = options;
  notTrained.steps = 0;
  const double diff = testing::maxAbsDifference(dist, ref);
  const double bound = testing::mixedPrecisionBound(ref, testing::referenceTraining(model, notTrained, data), 0x1p-7);
  std::printf("[int8] split 12,4: max |param difference| vs one fp32 process = %.3g (bound %.3g)\n", diff, bound);
  EXPECT_LT(diff, bound);
  auto exact = c;
  exact.compression = {};
  EXPECT_GT(diff, 10 * testing::maxAbsDifference(trainCompressed(exact, options, data), ref));
}

// One int8 sum on 3 ranks of a buffer that does not split evenly: within the two phases' half steps of the exact sum,
// and the same bits on every rank (each decodes the same gathered bytes).
TEST(CompressedSync, AnInt8SumIsWithinItsTwoStepsAndTheSameOnEveryRank) {
  testing::runRanks(3, [](comm::Communicator& comm) {
    const int64_t n = 1001;
    std::vector<at::Tensor> given;
    // A generator of its own per draw: the ranks are threads, and the global one would interleave their draws.
    for (int r = 0; r < 3; ++r) {
      auto generator = at::make_generator<at::CPUGeneratorImpl>(10 + r);
      given.push_back(at::randn({n}, generator, at::TensorOptions()) * (r + 1) * 0.01);
    }
    auto exchange = comm::makeBufferAllReduce(comm, kindOf(GradCompression::Int8), {{0, {n}}}, at::TensorOptions());
    auto buffer = given[comm.rank()].clone();
    exchange->beginStep(0);
    exchange->start(buffer);
    exchange->finish(buffer, nullptr, "test");
    const auto exact = given[0] + given[1] + given[2];
    double firstPhase = 0;  // each rank's codes: half a step of its largest value
    for (const auto& g : given) firstPhase += g.abs().max().item<double>() / 254;
    const double secondPhase = (exact.abs().max().item<double>() + firstPhase) / 254;  // the sum's codes
    EXPECT_LE((buffer - exact).abs().max().item<double>(), (firstPhase + secondPhase) * (1 + 1e-5));
    EXPECT_GT((buffer - exact).abs().max().item<double>(), 0.0);  // it was quantised
    const auto everyRank = comm.allgather(buffer);
    for (const auto& other : everyRank) EXPECT_TRUE(at::equal(other, everyRank[0]));
    // A quarter of float32's ring bytes, and the scales: 2 (P-1) chunks of ceil(1001/3) rounded to 4, plus 4 each.
    EXPECT_EQ(exchange->wireBytes(), 2 * 2 * (336 + 4));
  });
}

// --compress-warmup: its steps are the exact exchange, bit for bit; compression starts after them.
TEST(CompressedSync, WarmupStepsAreTheExactExchange) {
  const auto data = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 4, 16, 0.0);
  const auto none = trainCompressed({"none", "mlp", {}, {12, 4}, true}, options, data);
  auto powersgd = kindOf(GradCompression::PowerSgd);
  powersgd.warmupSteps = 4;
  EXPECT_EQ(testing::maxAbsDifference(trainCompressed({"warm", "mlp", powersgd, {12, 4}, true}, options, data), none),
            0.0);
  powersgd.warmupSteps = 2;
  EXPECT_GT(testing::maxAbsDifference(trainCompressed({"warm2", "mlp", powersgd, {12, 4}, true}, options, data), none),
            0.0);
}

// A rank no matrix of the model is worth factoring at is refused in one line, naming the largest that works.
TEST(CompressedSync, APowerSgdRankThatFactorsNothingIsRefused) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    comm::ParameterList params{{"fc.weight", at::zeros({10, 12})}, {"fc.bias", at::zeros({10})}};
    try {
      comm::FlatAllReduceSync(comm, comm::Exchange::Ring, params, kindOf(GradCompression::PowerSgd, 6));
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--grad-compress powersgd:6 factors no matrix of this model (its matrices are too small for that "
                "rank): choose a rank of at most 5");
    }
  });
}

}  // namespace
}  // namespace balancenet

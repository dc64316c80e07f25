// The fewer-phase all-reduces over the job's own Gloo mesh (halving-doubling, the all-to-all reduce-scatter +
// all-gather) and --comm auto switching among strategies step by step: each trains exactly like one
// process on the whole global batch, with unequal shares, at powers of two and at other world sizes, and gives
// the same bits when run again.
#include <gtest/gtest.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/commchoice/AutoSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet {
namespace {

using comm::Exchange;

struct ExchangeCase {
  std::string name;
  Exchange exchange;
  std::vector<int64_t> split;
};

// Unequal shares for every size up to 8: someone has 1 sample, someone many.
const std::vector<int64_t> kShares{5, 1, 9, 3, 7, 2, 11, 4};

std::vector<int64_t> sharesOf(int world) { return {kShares.begin(), kShares.begin() + world}; }

std::vector<at::Tensor> train(const testing::DistributedRun& run, const Split& split, int64_t steps = 4) {
  const auto data = testing::syntheticDataset(240, 3);
  const auto options = testing::comparisonOptions("sgd", steps, split.total(), 1e-4);
  return testing::distributedTraining(testing::comparisonModel("mlp"), options, data, run);
}

std::vector<at::Tensor> reference(const Split& split, int64_t steps = 4) {
  const auto data = testing::syntheticDataset(240, 3);
  const auto options = testing::comparisonOptions("sgd", steps, split.total(), 1e-4);
  return testing::referenceTraining(testing::comparisonModel("mlp"), options, data);
}

testing::DistributedRun runWith(const Split& split, Exchange exchange) {
  testing::DistributedRun run{split.worldSize(),
                              [split] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.sync = [exchange](comm::Communicator& comm, models::Network&) {
    return std::make_unique<comm::FlatAllReduceSync>(comm, exchange);
  };
  return run;
}

class ExchangeSyncTest : public ::testing::TestWithParam<ExchangeCase> {};

TEST_P(ExchangeSyncTest, UnequalSharesMatchOneProcessAndRepeatBitForBit) {
  const ExchangeCase& c = GetParam();
  const Split split{c.split};
  const auto run = runWith(split, c.exchange);
  const auto first = train(run, split);
  const auto expected = reference(split);
  const double diff = testing::maxAbsDifference(first, expected);
  const double bound = testing::exactnessBound(expected, 4);
  std::printf("[%s] split %s: max |param difference| vs one process = %.3g (float bound %.3g)\n", c.name.c_str(),
              split.str().c_str(), diff, bound);
  EXPECT_LT(diff, bound);
  EXPECT_EQ(testing::maxAbsDifference(train(run, split), first), 0.0) << "a second run differs";
}

INSTANTIATE_TEST_SUITE_P(Worlds, ExchangeSyncTest,
                         ::testing::Values(ExchangeCase{"hd_2", Exchange::HalvingDoubling, sharesOf(2)},
                                           ExchangeCase{"hd_3", Exchange::HalvingDoubling, sharesOf(3)},
                                           ExchangeCase{"hd_4", Exchange::HalvingDoubling, sharesOf(4)},
                                           ExchangeCase{"hd_6", Exchange::HalvingDoubling, sharesOf(6)},
                                           ExchangeCase{"hd_8", Exchange::HalvingDoubling, sharesOf(8)},
                                           ExchangeCase{"a2a_2", Exchange::AllToAll, sharesOf(2)},
                                           ExchangeCase{"a2a_5", Exchange::AllToAll, sharesOf(5)},
                                           ExchangeCase{"a2a_8", Exchange::AllToAll, sharesOf(8)}),
                         [](const auto& info) { return info.param.name; });

// Auto switches strategy every step while it tries them (no warm-up round, one measured round: the whole
// run is a trial), the overlapped buckets among them: the trajectory is still the one process's.
TEST(AutoSyncExactness, SwitchingStrategiesEveryStepMatchesOneProcess) {
  const Split split{sharesOf(4)};
  testing::DistributedRun run{4, [split] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.sync = [](comm::Communicator& comm, models::Network& net) {
    std::vector<commchoice::Candidate> candidates;
    candidates.push_back({"allreduce", std::make_unique<comm::BucketedAllReduceSync>(comm, comm::namedParameters(net),
                                                                                     comm::BucketOptions{})});
    candidates.push_back({"flat", std::make_unique<comm::FlatAllReduceSync>(comm, Exchange::Ring)});
    candidates.push_back({"hd", std::make_unique<comm::FlatAllReduceSync>(comm, Exchange::HalvingDoubling)});
    candidates.push_back({"a2a", std::make_unique<comm::FlatAllReduceSync>(comm, Exchange::AllToAll)});
    return std::make_unique<commchoice::AutoSync>(comm, std::move(candidates), commchoice::TrialSettings{0, 2});
  };
  const auto got = train(run, split, 9);
  const auto expected = reference(split, 9);
  EXPECT_LT(testing::maxAbsDifference(got, expected), testing::exactnessBound(expected, 9));
}

}  // namespace
}  // namespace balancenet

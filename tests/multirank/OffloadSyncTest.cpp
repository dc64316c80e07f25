// Offloading slow ranks to a ring peer keeps the engine's exactness: the same sum as the full all-reduce,
// so the same training as one process, whatever the split and however the plan changes between steps.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/OffloadSync.h"
#include "balancenet/commchoice/AutoSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/ChangingAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

std::unique_ptr<comm::GradientSync> offloadOverFlat(comm::Communicator& comm, models::Network& net) {
  return std::make_unique<comm::OffloadSync>(comm, comm::namedParameters(net),
                                             std::make_unique<comm::FlatAllReduceSync>(comm));
}

std::unique_ptr<comm::GradientSync> offloadOverBuckets(comm::Communicator& comm, models::Network& net) {
  comm::BucketOptions tiny;  // many buckets with hooks, which must stay quiet in offloaded steps
  tiny.bucketMb = 0.01;
  tiny.firstBucketMb = 0.005;
  const auto params = comm::namedParameters(net);
  return std::make_unique<comm::OffloadSync>(comm, params,
                                             std::make_unique<comm::BucketedAllReduceSync>(comm, params, tiny));
}

struct OffloadCase {
  std::string name;
  std::string model;
  std::vector<int64_t> split;
  bool buckets;
};

class OffloadSyncTest : public ::testing::TestWithParam<OffloadCase> {};

TEST_P(OffloadSyncTest, SkewedSplitMatchesSingleProcess) {
  const OffloadCase& c = GetParam();
  const Split split{c.split};
  ASSERT_TRUE(comm::planOffload(split.batches).offloads());
  const auto train = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 4, split.total(), 5e-4);
  testing::DistributedRun run;
  run.world = split.worldSize();
  run.allocator = [split] { return std::make_unique<orchestrator::StaticAllocator>(split); };
  run.sync = c.buckets ? offloadOverBuckets : offloadOverFlat;
  const auto model = testing::comparisonModel(c.model);
  const auto reference = testing::referenceTraining(model, options, train);
  const double diff = testing::maxAbsDifference(testing::distributedTraining(model, options, train, run), reference);
  const double bound = testing::exactnessBound(reference, options.steps);
  std::printf("[%s] split %s: max |param difference| vs single process = %.3g (float bound %.3g)\n", c.name.c_str(),
              split.str().c_str(), diff, bound);
  EXPECT_LT(diff, bound);
}

INSTANTIATE_TEST_SUITE_P(Splits, OffloadSyncTest,
                         ::testing::Values(OffloadCase{"cnn_one_slow_of_4", "cnn", {30, 28, 26, 4}, false},
                                           OffloadCase{"cnn_one_fast_of_3", "cnn", {5, 1, 26}, true},
                                           OffloadCase{"mlp_two_rings_of_5", "mlp", {20, 2, 18, 3, 1}, true},
                                           // A rank left out (a share of 0): its probe's gradient adds nothing.
                                           OffloadCase{"cnn_one_left_out_of_4", "cnn", {30, 32, 26, 0}, false},
                                           OffloadCase{"mlp_left_out_beside_a_client", "mlp", {30, 0, 28, 4}, true}),
                         [](const auto& info) { return info.param.name; });

// --comm auto's candidates each offload, over one group: their fast ranks sum by the ring, halving-doubling and
// all-to-all in turn (a candidate a step), sharing the group's one subgroup of the fast ranks; exact throughout.
TEST(OffloadSync, CandidatesOfAutoShareTheFastRanksSubgroupAndEachExchangeIsExact) {
  const Split split{{30, 28, 26, 4}};
  const auto train = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 7, split.total(), 5e-4);
  testing::DistributedRun run;
  run.world = split.worldSize();
  run.allocator = [split] { return std::make_unique<orchestrator::StaticAllocator>(split); };
  run.sync = [](comm::Communicator& comm, models::Network& net) {
    std::vector<commchoice::Candidate> candidates;
    for (auto exchange : {comm::Exchange::Ring, comm::Exchange::HalvingDoubling, comm::Exchange::AllToAll})
      candidates.push_back({comm::exchangeName(exchange),
                            std::make_unique<comm::OffloadSync>(comm, comm::namedParameters(net),
                                                                std::make_unique<comm::FlatAllReduceSync>(comm),
                                                                comm::kDefaultOffloadBelow, exchange)});
    return std::make_unique<commchoice::AutoSync>(comm, std::move(candidates), commchoice::TrialSettings{0, 2});
  };
  const auto model = testing::comparisonModel("cnn");
  const auto reference = testing::referenceTraining(model, options, train);
  EXPECT_LT(testing::maxAbsDifference(testing::distributedTraining(model, options, train, run), reference),
            testing::exactnessBound(reference, options.steps));
}

// The plan changes every step (a ring of one, of one other, everyone), and each plan comes back, so
// a member set's subgroup is reused, not formed a second time over the same store keys.
TEST(OffloadSync, PlanChangingEveryStepMatchesSingleProcess) {
  const auto train = testing::syntheticDataset(200, 4);
  const auto options = testing::comparisonOptions("sgd", 6, 48, 1e-4);
  const std::vector<Split> splits{Split{{1, 1, 46}}, Split{{30, 10, 8}}, Split{{16, 16, 16}}};
  testing::DistributedRun run;
  run.world = 3;
  run.allocator = [&] { return std::make_unique<testing::ChangingAllocator>(splits); };
  run.sync = offloadOverBuckets;
  const auto model = testing::comparisonModel("mlp");
  const auto reference = testing::referenceTraining(model, options, train);
  EXPECT_LT(testing::maxAbsDifference(testing::distributedTraining(model, options, train, run), reference),
            testing::exactnessBound(reference, options.steps));
}

// A rank leaves the exchange and comes back (the balanced policy's leave-out, then its recovery), the plan changing
// under the buckets' hooks: every step's gradient is the whole batch's.
TEST(OffloadSync, ARankLeftOutAndTakenBackMatchesSingleProcess) {
  const auto train = testing::syntheticDataset(200, 4);
  const auto options = testing::comparisonOptions("sgd", 8, 48, 1e-4);
  const std::vector<Split> splits{Split{{20, 20, 8}}, Split{{24, 24, 0}}, Split{{24, 24, 0}}, Split{{16, 16, 16}}};
  testing::DistributedRun run;
  run.world = 3;
  run.allocator = [&] { return std::make_unique<testing::ChangingAllocator>(splits); };
  run.sync = offloadOverBuckets;
  const auto model = testing::comparisonModel("cnn");
  const auto reference = testing::referenceTraining(model, options, train);
  const double diff = testing::maxAbsDifference(testing::distributedTraining(model, options, train, run), reference);
  const double bound = testing::exactnessBound(reference, options.steps);
  std::printf("a rank left out for two steps of four, twice: max |param difference| = %.3g (float bound %.3g)\n", diff,
              bound);
  EXPECT_LT(diff, bound);
}

// A left-out rank sends nothing and gets the sum; its peer receives from nobody and sends the sum back.
TEST(OffloadSync, ALeftOutRankSendsNothingAndGetsTheSum) {
  const std::vector<int64_t> batches{43, 43, 42, 0};
  testing::runRanks(4, [&](comm::Communicator& comm) {
    auto param = at::zeros({1000}, at::kFloat);
    comm::OffloadSync sync(comm, {{"layers.0.weight", param}}, std::make_unique<comm::FlatAllReduceSync>(comm));
    for (int step = 0; step < 2; ++step) {
      comm::SyncContext context;
      context.step = step;
      context.batches = batches;
      sync.beginStep(context);
      std::vector<at::Tensor> grads{at::full({1000}, comm.rank() < 3 ? comm.rank() + 1.0f : 0.0f)};
      auto scalars = at::full({1}, comm.rank() < 3 ? 1.0f : 0.0f);
      const auto stats = sync.synchronize(grads, scalars, context);
      EXPECT_TRUE(grads[0].eq(6.0f).all().item<bool>()) << "rank " << comm.rank();
      EXPECT_EQ(scalars.item<float>(), 3.0f) << "rank " << comm.rank();
      const int64_t payload = (1000 + 1) * 4, ring = comm::ringAllReduceWireBytes(payload, 3);
      const std::vector<int64_t> sent{ring + payload, ring, ring, 0}, received{ring, ring, ring, payload};
      EXPECT_EQ(stats.bytesSent, sent[comm.rank()]) << "rank " << comm.rank();
      EXPECT_EQ(stats.bytesReceived, received[comm.rank()]) << "rank " << comm.rank();
      // Serving a client that sends nothing is no hand-over: nothing for the policy to weigh.
      EXPECT_EQ(stats.clientsServed, 0) << "rank " << comm.rank();
      EXPECT_EQ(stats.servingMs, 0) << "rank " << comm.rank();
    }
  });
}

// Known shares: every rank ends with the sum; the slow rank moved its payload once each way, and its
// peer that plus its part of a ring of three.
TEST(OffloadSync, EveryRankGetsTheSumAndTheSlowRankMovesOnePayloadEachWay) {
  const std::vector<int64_t> batches{30, 28, 26, 4};
  testing::runRanks(4, [&](comm::Communicator& comm) {
    auto param = at::zeros({1000}, at::kFloat);
    comm::OffloadSync sync(comm, {{"layers.0.weight", param}}, std::make_unique<comm::FlatAllReduceSync>(comm));
    comm::SyncContext context;
    context.batches = batches;
    context.scalars = 2;  // the peer's receive goes up in beginStep, sized for them
    sync.beginStep(context);
    ASSERT_EQ(sync.plan().peerOf, (std::vector<int>{-1, -1, -1, 0}));
    std::vector<at::Tensor> grads{at::full({1000}, comm.rank() + 1.0f)};
    auto scalars = at::full({2}, 10.0f * comm.rank());
    const auto stats = sync.synchronize(grads, scalars, context);
    EXPECT_TRUE(grads[0].eq(10.0f).all().item<bool>()) << "rank " << comm.rank();
    EXPECT_TRUE(scalars.eq(60.0f).all().item<bool>()) << "rank " << comm.rank();
    const int64_t payload = (1000 + 2) * 4, ring = comm::ringAllReduceWireBytes(payload, 3);
    const std::vector<int64_t> expected{payload + ring, ring, ring, payload};
    EXPECT_EQ(stats.bytesSent, expected[comm.rank()]) << "rank " << comm.rank();
    EXPECT_EQ(stats.bytesReceived, expected[comm.rank()]) << "rank " << comm.rank();
    EXPECT_EQ(stats.phases, 2 + 4) << "rank " << comm.rank();  // hand-over, a ring of three, hand-back
  });
}

// The hand-back is not waited for within its step and a peer's receives go up in beginStep: consecutive steps whose
// plans change (a client becomes a peer, a step without offloading) must still each give every rank its own step's
// sum, none of the last step's.
TEST(OffloadSync, ConsecutiveStepsWithChangingPlansEachGiveTheirOwnSum) {
  const std::vector<std::vector<int64_t>> splits{
      {30, 28, 26, 4}, {30, 28, 26, 4}, {4, 30, 28, 26}, {25, 25, 25, 25}, {30, 28, 26, 4}};
  testing::runRanks(4, [&](comm::Communicator& comm) {
    auto param = at::zeros({1000}, at::kFloat);
    comm::OffloadSync sync(comm, {{"layers.0.weight", param}}, std::make_unique<comm::FlatAllReduceSync>(comm));
    for (size_t step = 0; step < splits.size(); ++step) {
      comm::SyncContext context;
      context.step = static_cast<int64_t>(step);
      context.batches = splits[step];
      sync.beginStep(context);
      const float mine = comm.rank() + 1.0f + 10.0f * static_cast<float>(step);
      std::vector<at::Tensor> grads{at::full({1000}, mine)};
      auto scalars = at::full({1}, mine);
      sync.synchronize(grads, scalars, context);
      const float sum = 10.0f + 40.0f * static_cast<float>(step);
      EXPECT_TRUE(grads[0].eq(sum).all().item<bool>()) << "rank " << comm.rank() << " step " << step;
      EXPECT_EQ(scalars.item<float>(), sum) << "rank " << comm.rank() << " step " << step;
    }
  });
}

}  // namespace
}  // namespace balancenet

// makeStageSync: the exchange among a pipeline stage's replicas follows --comm (issue 56: the stages
// hard-coded the ring whatever --comm said).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <mutex>

#include "balancenet/comm/Exchange.h"
#include "balancenet/core/Error.h"
#include "balancenet/worker/SyncFactory.h"
#include "testing/ThreadRanks.h"

namespace balancenet::worker {
namespace {

job::JobConfig withComm(comm::CommMode mode) {
  job::JobConfig c;
  c.comm.mode = mode;
  return c;
}

// Four replicas of a stage: each exchange sums every rank's gradient and scalars exactly, in its own phases.
TEST(StageSync, SumsOverTheReplicasByTheExchangeComm) {
  const std::pair<comm::CommMode, comm::Exchange> modes[] = {
      {comm::CommMode::Auto, comm::Exchange::Ring},  // one exchange after the schedule: nothing to time
      {comm::CommMode::Flat, comm::Exchange::Ring},
      {comm::CommMode::HalvingDoubling, comm::Exchange::HalvingDoubling},
      {comm::CommMode::AllToAll, comm::Exchange::AllToAll},
  };
  for (const auto& [mode, exchange] : modes) {
    std::mutex m;
    std::vector<int64_t> phases;
    testing::runRanks(4, [&, mode = mode](comm::Communicator& stage) {
      auto sync = makeStageSync(stage, withComm(mode));
      std::vector<at::Tensor> grads{at::full({3}, stage.rank() + 1.0f), at::full({2, 2}, 10.0f * stage.rank())};
      at::Tensor scalars = at::full({1}, 1.0f);
      comm::SyncContext context;
      context.localBatch = 1;
      const auto stats = sync->synchronize(grads, scalars, context);
      EXPECT_TRUE(grads[0].equal(at::full({3}, 10.0f)));  // 1 + 2 + 3 + 4
      EXPECT_TRUE(grads[1].equal(at::full({2, 2}, 60.0f)));
      EXPECT_EQ(scalars[0].item<float>(), 4.0f);
      std::lock_guard<std::mutex> lock(m);
      phases.push_back(stats.phases);
    });
    EXPECT_EQ(phases, std::vector<int64_t>(4, comm::exchangePhases(exchange, 4))) << comm::commModeName(mode);
  }
  // The three exchanges differ at four replicas, so the phases above tell which one ran.
  EXPECT_NE(comm::exchangePhases(comm::Exchange::Ring, 4), comm::exchangePhases(comm::Exchange::AllToAll, 4));
  EXPECT_NE(comm::exchangePhases(comm::Exchange::Ring, 4), comm::exchangePhases(comm::Exchange::HalvingDoubling, 4));
}

TEST(StageSync, TheModesAStageCannotRunAreAnInternalError) {
  for (const auto mode : {comm::CommMode::AllReduce, comm::CommMode::SufficientFactors, comm::CommMode::Hybrid,
                          comm::CommMode::ParameterServers})
    testing::runRanks(1, [mode](comm::Communicator& stage) {
      EXPECT_THROW(makeStageSync(stage, withComm(mode)), InternalError) << comm::commModeName(mode);
    });
}

}  // namespace
}  // namespace balancenet::worker

// Where the balanced policy may leave a worker out of the exchange (a share of 0): the C++ worker with an exchange
// that takes it out of the ring, and nowhere a share of 0 would break the step.
#include <gtest/gtest.h>

#include "balancenet/worker/GroupWiring.h"

namespace balancenet::worker {
namespace {

ProcessProfile cppWorker() {
  ProcessProfile p;
  p.emptyShares = true;
  return p;
}

TEST(LeaveOutAllowed, TheCppWorkerWithAnOffloadingAllReduceMay) {
  job::JobConfig c;  // --comm auto, --offload-below 0.5: the defaults
  EXPECT_TRUE(leavesOutAllowed(c, cppWorker()));
  for (auto mode :
       {comm::CommMode::AllReduce, comm::CommMode::Flat, comm::CommMode::HalvingDoubling, comm::CommMode::AllToAll}) {
    c.comm.mode = mode;
    EXPECT_TRUE(leavesOutAllowed(c, cppWorker())) << comm::commModeName(mode);
  }
}

TEST(LeaveOutAllowed, NotWhereAShareOfZeroWouldBreakTheStep) {
  const job::JobConfig defaults;
  EXPECT_FALSE(leavesOutAllowed(defaults, ProcessProfile{}));  // the Python session, a pipeline's column heads
  auto c = defaults;
  c.comm.offloadBelow = 0;  // nothing takes it out of the ring
  EXPECT_FALSE(leavesOutAllowed(c, cppWorker()));
  for (auto mode : {comm::CommMode::SufficientFactors, comm::CommMode::Hybrid, comm::CommMode::ParameterServers}) {
    c = defaults;
    c.comm.mode = mode;
    EXPECT_FALSE(leavesOutAllowed(c, cppWorker())) << comm::commModeName(mode);
  }
  c = defaults;
  c.syncBatchNorm = true;  // a collective inside forward
  EXPECT_FALSE(leavesOutAllowed(c, cppWorker()));
  c = defaults;
  c.comm.staleness = 2;  // SSP
  EXPECT_FALSE(leavesOutAllowed(c, cppWorker()));
}

}  // namespace
}  // namespace balancenet::worker

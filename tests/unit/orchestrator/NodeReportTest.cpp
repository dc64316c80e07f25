// NodeReport: a rank's window summarised, the master's decision, the report row's length.
#include <gtest/gtest.h>

#include "PolicyTestSupport.h"
#include "balancenet/core/Error.h"
#include "balancenet/memory/PassFit.h"
#include "balancenet/orchestrator/NodeReport.h"
#include "balancenet/orchestrator/policies/EqualPolicy.h"

namespace balancenet::orchestrator {
namespace {

metrics::StepRecord record(int64_t step, int64_t batch, double computeMs, double syncMs) {
  metrics::StepRecord r;
  r.step = step;
  r.batch = batch;
  r.computeMs = computeMs;
  r.syncMs = syncMs;
  return r;
}

TEST(NodeReport, SummarisesTheWindow) {
  NodeSample sample;
  sample.residentBytes = 5e8;
  sample.memoryAvailableBytes = 1e9;
  sample.latencyMs = {0.1, 0.2};
  sample.latencyPeers = {3, 9};
  const NodeMetrics m = summarizeWindow(2, 40, {record(1, 40, 10, 4), record(2, 40, 30, 2)}, sample, 1e6, 1e7);
  EXPECT_EQ(m.rank, 2);
  EXPECT_EQ(m.batch, 40);
  EXPECT_DOUBLE_EQ(m.computeMs, 20);
  EXPECT_DOUBLE_EQ(m.waitMs, 3);
  EXPECT_DOUBLE_EQ(m.opsPerSecond, 3 * 1e6 * 80 / 0.04);  // training FLOPs over the compute seconds
  EXPECT_EQ(m.maxBatch, 40 + 80);                         // 80% of 1 GB at 10 MB a sample
  ASSERT_EQ(m.recent.size(), 2u);
  EXPECT_EQ(m.recent[1], (std::pair<int64_t, double>{40, 30}));
  EXPECT_EQ(m.latencyPeers, (std::vector<int>{3, 9}));
  sample.gemmFlops = 7e9;
  EXPECT_DOUBLE_EQ(summarizeWindow(0, 40, {}, sample, 1e6, 0).opsPerSecond, 7e9);  // nothing timed yet: the prior
  EXPECT_EQ(summarizeWindow(0, 40, {}, sample, 1e6, 0).maxBatch, 0);               // no per-sample memory: no cap
}

// A rank left out of the exchange (batch 0) reports its probe's samples as its speed, and a peer what serving its
// clients cost.
TEST(NodeReport, ALeftOutRankReportsItsProbeAndAPeerItsServing) {
  auto probe = record(1, 0, 31, 5);
  probe.probeSamples = 1;
  const NodeMetrics m = summarizeWindow(3, 0, {probe, probe}, NodeSample{}, 1e6, 0);
  ASSERT_EQ(m.recent.size(), 2u);
  EXPECT_EQ(m.recent[0], (std::pair<int64_t, double>{1, 31}));
  EXPECT_DOUBLE_EQ(m.opsPerSecond, 3 * 1e6 * 2 / 0.062);  // its probe's samples over their time
  auto peer = record(1, 43, 80, 20);
  peer.servingMs = 4;
  peer.clientsServed = 1;
  const NodeMetrics p = summarizeWindow(0, 43, {peer, record(2, 43, 80, 20)}, NodeSample{}, 1e6, 0);
  EXPECT_DOUBLE_EQ(p.servingMs, 2);
  EXPECT_DOUBLE_EQ(p.clientsServed, 0.5);
}

// A worker's memory budget in passes (worker/WorkerMemory): a fixed --accumulate's cap is the tighter of it and
// the available memory's; --accumulate auto lifts both (more passes instead of a smaller share).
TEST(NodeReport, TheSharesCapFromItsPassesOrNoneUnderAccumulateAuto) {
  NodeSample sample;
  sample.memoryAvailableBytes = 1e9;  // 40 + 80 samples at 10 MB
  sample.shareCap = 56;
  EXPECT_EQ(summarizeWindow(0, 40, {}, sample, 1e6, 1e7).maxBatch, 56);
  sample.shareCap = 500;
  EXPECT_EQ(summarizeWindow(0, 40, {}, sample, 1e6, 1e7).maxBatch, 120);
  EXPECT_EQ(summarizeWindow(0, 40, {}, sample, 1e6, 0).maxBatch, 500);  // no per-sample estimate: the passes' cap
  sample.shareCap = memory::kUnlimited;
  EXPECT_EQ(summarizeWindow(0, 40, {}, sample, 1e6, 1e7).maxBatch, 0);
}

// Issue 55: a capped host's hand-over and optimizer step hold the exchange as its compute does: the window carries
// their mean beside the compute's, which stays the compute's alone (the policies' per-sample fit and the ops/s).
TEST(NodeReport, CarriesTheRanksOwnWorkBesideItsCompute) {
  auto slow = record(1, 4, 40, 60);
  slow.ownMs = 50;
  auto slower = record(2, 4, 60, 60);
  slower.ownMs = 70;
  const NodeMetrics m = summarizeWindow(3, 4, {slow, slower}, NodeSample{}, 1e6, 0);
  EXPECT_DOUBLE_EQ(m.computeMs, 50);
  EXPECT_DOUBLE_EQ(m.ownMs, 60);
  ASSERT_EQ(m.recent.size(), 2u);
  EXPECT_EQ(m.recent[1], (std::pair<int64_t, double>{4, 60}));
  EXPECT_DOUBLE_EQ(m.opsPerSecond, 3 * 1e6 * 8 / 0.1);
}

TEST(NodeReport, MasterTurnsSyncIntoWaitingAndChecksTheSplit) {
  auto input = testing::blankInput(3, 30, 5);
  input.nodes[0].waitMs = 7;
  input.nodes[1].waitMs = 2;
  input.nodes[2].waitMs = 4;
  EqualPolicy equal;
  const Decision d = decideOnMaster(equal, input);
  EXPECT_EQ(d.split.total(), 30);
  EXPECT_DOUBLE_EQ(input.nodes[0].waitMs, 5);
  EXPECT_DOUBLE_EQ(input.nodes[1].waitMs, 0);
  EXPECT_DOUBLE_EQ(input.nodes[2].waitMs, 2);
}

TEST(NodeReport, WidensThePeriodOnlyWhileTheRebalanceIsNotNegligible) {
  EXPECT_EQ(widenedPeriod(5, 0.01, 10, 0.01), 5);  // 0.01 ms against 0.5 ms allowed
  EXPECT_EQ(widenedPeriod(5, 10, 10, 0.01), 160);  // needs period >= 100: 5 doubled five times
  EXPECT_EQ(widenedPeriod(5, 1e9, 10, 0.01), kMaxRebalanceEvery);
  EXPECT_EQ(widenedPeriod(5, 10, 10, 0), 5);  // no budget: a fixed period
}

TEST(NodeReport, RowLengthIsOOfKWithProbePeers) {
  EXPECT_EQ(reportWindow(5), 5);
  EXPECT_EQ(reportWindow(1000), kMaxReportWindow);
  EXPECT_EQ(reportRowLength(5, 4096, 0), 14 + 10 + 4096);
  EXPECT_EQ(reportRowLength(5, 4096, 8), 14 + 10 + 16);
  EXPECT_EQ(reportRowLength(5, 64, 8), reportRowLength(5, 4096, 8));
}

}  // namespace
}  // namespace balancenet::orchestrator

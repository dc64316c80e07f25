// ClusterSimulator: the real policies driven over simulated clusters, small and at 4,096 nodes.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/NodeReport.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
#include "balancenet/simulate/ClusterSimulator.h"

namespace balancenet::simulate {
namespace {

SimulationOptions quiet(int nodes, int64_t batch, int64_t steps) {
  SimulationOptions o;
  o.nodes = nodes;
  o.globalBatch = batch;
  o.steps = steps;
  o.rebalanceBudget = 0;
  o.law.noise = Distribution::parse("const:1", "--noise");
  return o;
}

SimulationResult run(const std::string& policyName, const SimulationOptions& o) {
  orchestrator::PolicyOptions p;
  p.name = policyName;
  auto policy = orchestrator::makePolicy(p);
  return simulateCluster(*policy, o);
}

TEST(ClusterSimulator, IdealIsTheContinuousMinMax) {
  EXPECT_DOUBLE_EQ(idealComputeMs({0, 0}, {1, 3}, 8), 6.0);    // b = 6 and 2: both take 6 ms
  EXPECT_DOUBLE_EQ(idealComputeMs({0, 10}, {1, 1}, 4), 11.0);  // the slow node's one sample bounds it
}

// At 4,096 nodes the all-gather of the reports is ~4,095 latencies (20 ms at 5 us) against steps of tens
// of ms every 5 steps: with a 1% budget the period widens, and the rebalance share falls.
TEST(ClusterSimulator, ABudgetWidensThePeriodAtScale) {
  auto o = quiet(4096, 65536, 60);
  const auto fixed = run("equal", o);
  EXPECT_EQ(fixed.finalRebalanceEvery, 5);
  EXPECT_GT(fixed.rebalanceCommMs, 20.0);
  o.rebalanceBudget = 0.01;
  const auto widened = run("equal", o);
  EXPECT_GE(widened.finalRebalanceEvery, 40);
  EXPECT_LT(widened.decisions, fixed.decisions);
  EXPECT_GT(widened.samplesPerSecond, fixed.samplesPerSecond);
}

TEST(ClusterSimulator, EqualOnHomogeneousNodesIsIdeal) {
  const auto r = run("equal", quiet(8, 256, 40));
  EXPECT_EQ(r.decisions, 7);  // steps 5, 10, ..., 35
  EXPECT_EQ(r.minBatch, 32);
  EXPECT_EQ(r.maxBatch, 32);
  EXPECT_GT(r.efficiency, 0.98);
  EXPECT_LE(r.efficiency, 1.0 + 1e-9);
}

TEST(ClusterSimulator, BalancedMovesSamplesOffASlowNodeAndBeatsEqual) {
  auto o = quiet(8, 256, 200);
  o.law.changes = StepLawOptions::parseChanges("0:3:0.25");  // node 3 at a quarter speed from the start
  const auto equal = run("equal", o);
  const auto balanced = run("balanced", o);
  // Ideal: T = 23.2 ms (node 3 takes 1.6 samples), +5.6 ms all-reduce; equal waits 84 ms for node 3.
  EXPECT_LT(equal.efficiency, 0.4);
  EXPECT_GT(balanced.efficiency, 0.85);  // the first 5 steps at the equal split included
  EXPECT_EQ(balanced.slowestPercentBatch, static_cast<double>(balanced.minBatch));  // node 3 got the least
  EXPECT_LT(balanced.minBatch, 16);
  EXPECT_TRUE(balanced.sumsExact);
}

TEST(ClusterSimulator, SameSeedSameSplits) {
  auto o = quiet(64, 4096, 30);
  o.speeds = Distribution::parse("lognormal:1,0.5", "--speeds");
  o.law.noise = Distribution::parse("lognormal:1,0.1", "--noise");
  o.law.drift = 0.01;
  const auto a = run("balanced", o), b = run("balanced", o);
  EXPECT_EQ(a.minBatch, b.minBatch);
  EXPECT_EQ(a.maxBatch, b.maxBatch);
  EXPECT_EQ(a.slowestPercentBatch, b.slowestPercentBatch);
  EXPECT_EQ(a.idealSamplesPerSecond, b.idealSamplesPerSecond);
  o.seed = 2;
  EXPECT_NE(run("balanced", o).idealSamplesPerSecond, a.idealSamplesPerSecond);
}

// The scale: 4,096 nodes, B = 65,536 (16 samples a node). Every policy that keeps B must keep it
// exactly, with every node at >= 1 sample, whatever the spread of speeds.
TEST(ClusterSimulator, At4096NodesSplitsStayExactWithAtLeastOneSample) {
  auto o = quiet(4096, 65536, 11);  // decisions at steps 5 and 10
  o.speeds = Distribution::parse("lognormal:1,1", "--speeds");
  for (const char* name : {"equal", "proportional", "balanced"}) {
    const auto r = run(name, o);
    EXPECT_EQ(r.decisions, 2) << name;
    EXPECT_TRUE(r.sumsExact) << name;
    EXPECT_EQ(r.finalTotal, 65536) << name;
    EXPECT_GE(r.minBatch, 1) << name;
  }
  const auto proportional = run("proportional", o);
  EXPECT_LT(proportional.slowestPercentBatch, 16);  // the slowest 1% get less than the equal share
  EXPECT_GT(proportional.maxBatch, 16);
}

TEST(ClusterSimulator, ReportBytesAreOOfKWithProbePeersAndOOfNWithout) {
  auto o = quiet(4096, 65536, 2);
  o.probePeers = 8;
  const auto sampled = run("equal", o);
  EXPECT_EQ(sampled.reportBytesPerNode, 8 * (orchestrator::kReportHeaderDoubles + 2 * 5 + 2 * 8));
  o.probePeers = 0;
  o.nodes = 512;  // all pairs: the row grows with N
  EXPECT_EQ(run("equal", o).reportBytesPerNode, 8 * (orchestrator::kReportHeaderDoubles + 2 * 5 + 512));
}

TEST(ClusterSimulator, RejectsWhatCannotRun) {
  auto o = quiet(8, 4, 10);
  EXPECT_THROW(run("equal", o), UsageError);  // B < N
  o = quiet(8, 64, 0);
  EXPECT_THROW(run("equal", o), UsageError);
  o = quiet(8, 64, 10);
  o.speeds = Distribution::parse("normal:0,1", "--speeds");
  EXPECT_THROW(run("equal", o), UsageError);  // a non-positive speed drawn
}

}  // namespace
}  // namespace balancenet::simulate

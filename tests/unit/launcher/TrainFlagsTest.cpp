// parseTrainCommandLine: the train flags become a validated JobConfig, or one UsageError line naming the flag.
#include "balancenet/launcher/TrainFlags.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "balancenet/core/EnvironmentVariables.h"
#include "testing/UsageErrors.h"

namespace balancenet::launcher {
namespace {

using balancenet::testing::usageErrorOf;

class TrainFlags : public ::testing::Test {
 protected:
  // These tests are the launcher's view: no inherited worker identity.
  void SetUp() override {
    for (const auto& v : environmentVariables())
      if (v.identity) ::unsetenv(v.name);
  }
};

void expectRefused(const std::vector<std::string>& args, const std::string& fragment) {
  const auto message = usageErrorOf([&] { parseTrainCommandLine(args); });
  EXPECT_NE(message.find(fragment), std::string::npos) << "got: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line: " << message;
}

TEST_F(TrainFlags, DefaultsAreOneWorkerAllReduceAndTheBalancedPolicy) {
  const auto c = parseTrainCommandLine({});
  EXPECT_EQ(c.launch.worldSize(), 1);
  EXPECT_EQ(c.comm.mode, comm::CommMode::AllReduce);
  EXPECT_EQ(c.orchestration.policy, "balanced");
  EXPECT_EQ(c.split.batches, std::vector<int64_t>{c.trainer.globalBatch});
  EXPECT_FALSE(c.worker.has_value());
  EXPECT_EQ(c.argv, (std::vector<std::string>{"balancenet", "train"}));
}

TEST_F(TrainFlags, WorkerFlagsAndTheirOlderNodeSpellingsAreTheSame) {
  EXPECT_EQ(parseTrainCommandLine({"--workers", "3"}).launch.nprocPerNode, 3);
  EXPECT_EQ(parseTrainCommandLine({"--nodes", "3"}).launch.nprocPerNode, 3);
  const auto elastic = parseTrainCommandLine({"--workers", "3", "--elastic", "--min-nodes", "2", "--max-workers", "5"});
  EXPECT_EQ(elastic.resilience.minNodes, 2);
  EXPECT_EQ(elastic.resilience.maxNodes, 5);
  const auto hosts = parseTrainCommandLine({"--hosts", "2", "--host-rank", "1", "--master-port", "29500"});
  EXPECT_EQ(hosts.launch.nnodes, 2);
  EXPECT_EQ(hosts.launch.nodeRank, 1);
}

TEST_F(TrainFlags, ExplicitZeroWorkersIsRefusedNotTheDefault) {
  expectRefused({"--workers", "0"}, "--workers must be at least 1, got 0");
  expectRefused({"--nodes", "0"}, "--workers must be at least 1, got 0");
  expectRefused({"--nodes", "-2"}, "--workers must be at least 1, got -2");
}

TEST_F(TrainFlags, SlowdownBelowOneIsRefused) {
  expectRefused({"--workers", "2", "--slowdown", "0.5,1"}, "--slowdown factors must be at least 1");
  expectRefused({"--workers", "2", "--slowdown", "1,1", "--slowdown-schedule", "10=1,0.5"},
                "--slowdown factors must be at least 1");
  EXPECT_FALSE(parseTrainCommandLine({"--workers", "2", "--slowdown", "1,4"}).emulation.slowdown.empty());
}

TEST_F(TrainFlags, OptimiserAndScheduleValuesOutOfRangeAreRefused) {
  expectRefused({"--lr-min", "-0.1"}, "--lr-min must be in [0, --lr 0.05], got -0.1");
  expectRefused({"--lr", "0.1", "--lr-min", "0.2"}, "--lr-min must be in [0, --lr 0.1], got 0.2");
  expectRefused({"--lr-gamma", "0"}, "--lr-gamma must be in (0, 1], got 0");
  expectRefused({"--lr-gamma", "1.5"}, "--lr-gamma must be in (0, 1], got 1.5");
  expectRefused({"--lr-step-every", "0"}, "--lr-step-every must be at least 1, got 0");
  expectRefused({"--momentum", "1"}, "--momentum must be in [0, 1), got 1");
  expectRefused({"--momentum", "-0.5"}, "--momentum must be in [0, 1), got -0.5");
  expectRefused({"--weight-decay", "-1e-4"}, "--weight-decay must not be negative, got -0.0001");
  const auto ok =
      parseTrainCommandLine({"--lr-min", "0.01", "--lr-gamma", "1", "--momentum", "0", "--weight-decay", "0"});
  EXPECT_DOUBLE_EQ(ok.trainer.lr.minLr, 0.01);
}

// 0 is what --help documents as the default (the rendezvous timeout); only a negative value is refused,
// with a message that says so (it used to say "must be positive" while accepting 0).
TEST_F(TrainFlags, StallTimeoutZeroMeansTheRendezvousTimeout) {
  expectRefused({"--stall-timeout", "-1"}, "--stall-timeout must not be negative (0: --rendezvous-timeout), got -1");
  const auto c = parseTrainCommandLine({"--stall-timeout", "0", "--rendezvous-timeout", "7"});
  EXPECT_EQ(c.resilience.stallTimeout, std::chrono::milliseconds(7000));
  EXPECT_EQ(parseTrainCommandLine({"--stall-timeout", "2.5"}).resilience.stallTimeout, std::chrono::milliseconds(2500));
}

TEST_F(TrainFlags, CommModesComeFromTheRegistry) {
  for (const auto& entry : comm::commModes()) {
    std::vector<std::string> args{"--comm", entry.name};
    if (entry.mode == comm::CommMode::ParameterServers) args.insert(args.end(), {"--ps", "1"});
    EXPECT_EQ(parseTrainCommandLine(args).comm.mode, entry.mode) << entry.name;
    EXPECT_EQ(comm::commModeNamed(entry.name), entry.mode);
    EXPECT_STREQ(comm::commModeName(entry.mode), entry.name);
  }
  expectRefused({"--comm", "pigeon"}, "unknown --comm 'pigeon'; choose one of: allreduce, flat, sfb, hybrid, ps");
  expectRefused({"--comm", "sfb", "--elastic"}, "--elastic works with --comm allreduce or flat, not --comm sfb");
}

TEST_F(TrainFlags, ParseErrorsAreUsageErrors) {
  expectRefused({"--bogus-flag", "3"}, "--bogus-flag");
  expectRefused({"--steps", "ten"}, "--steps");
}

TEST_F(TrainFlags, WorkerIdentityComesFromTheEnvironment) {
  ::setenv(kRankVar, "1", 1);
  ::setenv(kWorldSizeVar, "2", 1);
  ::setenv(kMasterPortVar, "29500", 1);
  const auto c = parseTrainCommandLine({"--threads", "2"});
  ASSERT_TRUE(c.worker.has_value());
  EXPECT_EQ(c.worker->rank, 1);
  EXPECT_EQ(c.split.worldSize(), 2);
  EXPECT_EQ(c.threads, 2);
}

}  // namespace
}  // namespace balancenet::launcher

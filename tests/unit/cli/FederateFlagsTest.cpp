// parseFederateCommandLine: the federate flags become a validated JobConfig, or one UsageError line naming the flag.
#include "balancenet/cli/FederateCommand.h"

#include <gtest/gtest.h>

#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

using balancenet::testing::expectOneLineUsageError;

class FederateFlagsTest : public LauncherViewTest {};

void expectFederateRefused(const std::vector<std::string>& args, const std::string& fragment) {
  expectOneLineUsageError([&] { parseFederateCommandLine(args); }, fragment);
}

TEST_F(FederateFlagsTest, DefaultsAreEightClientsAndOneServerProcess) {
  const auto c = parseFederateCommandLine({});
  ASSERT_TRUE(c.federated.has_value());
  EXPECT_EQ(c.federated->clients, 8);
  EXPECT_EQ(c.launch.worldSize(), 9) << "rank 0 is the server";
  EXPECT_EQ(c.model.name, "cnn");
  EXPECT_EQ(c.argv, (std::vector<std::string>{"balancenet", "federate"}));
}

TEST_F(FederateFlagsTest, ValuesReachTheOptions) {
  const auto c = parseFederateCommandLine({"--clients", "3", "--strategy", "fednova", "--alpha", "iid", "--local-steps",
                                           "5:9", "--fraction", "0.5", "--deadline-s", "2.5", "--node-speed",
                                           "100,50,25", "--peer-timeout", "4", "--max-restarts", "2"});
  const auto& o = *c.federated;
  EXPECT_EQ(c.launch.worldSize(), 4);
  EXPECT_EQ(o.strategy, "fednova");
  EXPECT_EQ(o.alpha, federated::kIid);
  EXPECT_EQ(o.localSteps.low, 5);
  EXPECT_EQ(o.localSteps.high, 9);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_DOUBLE_EQ(o.deadlineS, 2.5);
  EXPECT_DOUBLE_EQ(c.emulation.nodeSpeed.at(0, 2), 25);
  EXPECT_EQ(c.resilience.peerTimeout.count(), 4000);
  EXPECT_EQ(c.resilience.maxRestarts, 2);
  EXPECT_EQ(parseFederateCommandLine({"--local-steps", "7"}).federated->localSteps.high, 7);
  const auto opt = *parseFederateCommandLine({"--server-opt", "yogi", "--server-lr", "0.03", "--server-momentum", "0.5",
                                              "--server-beta2", "0.9", "--server-tau", "0.01", "--client-momentum",
                                              "0.8", "--aggregator", "trimmed-mean:0.2", "--max-update-norm", "50"})
                        .federated;
  EXPECT_EQ(opt.serverOpt, "yogi");
  EXPECT_DOUBLE_EQ(opt.serverLr, 0.03);
  EXPECT_DOUBLE_EQ(opt.serverMomentum, 0.5);
  EXPECT_DOUBLE_EQ(opt.serverBeta2, 0.9);
  EXPECT_DOUBLE_EQ(opt.serverTau, 0.01);
  EXPECT_DOUBLE_EQ(opt.clientMomentum, 0.8);
  EXPECT_DOUBLE_EQ(opt.trimBeta, 0.2);
  EXPECT_DOUBLE_EQ(opt.maxUpdateNorm, 50);
  EXPECT_DOUBLE_EQ(parseFederateCommandLine({"--aggregator", "trimmed-mean"}).federated->trimBeta, 0.1);
  EXPECT_EQ(parseFederateCommandLine({}).federated->serverOpt, "avg");
  EXPECT_EQ(parseFederateCommandLine({}).federated->serverLr, 1) << "avg: the strategy's update unscaled";
  EXPECT_EQ(parseFederateCommandLine({"--server-opt", "adam"}).federated->serverLr, kDefaultAdaptiveServerLr);
  EXPECT_EQ(parseFederateCommandLine({"--server-opt", "avgm"}).federated->serverLr, 1);
}

TEST_F(FederateFlagsTest, BadValuesAreOneLineNamingTheFlag) {
  expectFederateRefused({"--strategy", "fedsgd"}, "unknown --strategy 'fedsgd'");
  expectFederateRefused({"--fraction", "0"}, "--fraction must be in (0, 1]");
  expectFederateRefused({"--fraction", "1.5"}, "--fraction");
  expectFederateRefused({"--alpha", "-1"}, "--alpha");
  expectFederateRefused({"--alpha", "lots"}, "--alpha");
  for (const std::string steps : {"0", "9:3", "x", "3:", "2:4:6", "-1"})
    expectFederateRefused({"--local-steps", steps}, "--local-steps must be");
  expectFederateRefused({"--clients", "3", "--node-speed", "100,50"}, "--node-speed");
  expectFederateRefused({"--clients", "0"}, "--clients must be at least 1");
  expectFederateRefused({"--rounds", "0"}, "--rounds");
  expectFederateRefused({"--local-batch", "0"}, "--local-batch");
  expectFederateRefused({"--server-opt", "sgd"}, "unknown --server-opt 'sgd'");
  expectFederateRefused({"--server-momentum", "1"}, "--server-momentum must be in [0, 1)");
  expectFederateRefused({"--server-beta2", "-0.5"}, "--server-beta2 must be in [0, 1)");
  expectFederateRefused({"--server-tau", "0"}, "--server-tau must be positive");
  expectFederateRefused({"--client-momentum", "-0.1"}, "--client-momentum must be in [0, 1)");
  expectFederateRefused({"--aggregator", "trimmed-mean:0.5"}, "--aggregator must be");
  expectFederateRefused({"--aggregator", "median"}, "--aggregator must be");
  expectFederateRefused({"--max-update-norm", "-1"}, "--max-update-norm must be");
  expectFederateRefused({"--buffer", "0"}, "--buffer");
  expectFederateRefused({"--client-eval-every", "-1"}, "--client-eval-every must not be negative");
  expectFederateRefused({"--lr", "0"}, "--lr must be positive");
  expectFederateRefused({"--deadline-s", "-1"}, "--deadline-s");
  expectFederateRefused({"--workers", "3"}, "--workers");  // not offered: --clients sets the processes
  expectFederateRefused({"--resume"}, "--resume needs --checkpoint-dir");
  expectFederateRefused({"--clients", "3", "--net-delay-ms", "1,1"}, "--net-delay-ms has 2 values");
  expectFederateRefused({"--sync-bn"}, "--sync-bn");
  expectFederateRefused({"--clients", "3", "--nnodes", "2", "--nproc-per-node", "3", "--master-port", "29500"},
                        "must be --clients 3 + 1");
  expectFederateRefused({"--model", "nosuch"}, "unknown --model");
}

}  // namespace
}  // namespace balancenet::cli

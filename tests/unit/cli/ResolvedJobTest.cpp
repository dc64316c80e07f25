// The job a launcher hands its processes instead of its flags (job/JobConfigJson.h): what each command resolves
// comes back whole, and a world the hosts agree on that differs from the assumed one is resolved again for it.
#include <gtest/gtest.h>

#include "balancenet/cli/FederateCommand.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/LaunchFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/job/JobConfigJson.h"
#include "testing/LauncherViewTest.h"

namespace balancenet::cli {
namespace {

class ResolvedJob : public LauncherViewTest {};

void expectTheSameJobBack(const job::JobConfig& c) {
  const std::string text = job::jobConfigJson(c);
  EXPECT_EQ(job::jobConfigJson(job::jobConfigFromJson(text)), text);
}

TEST_F(ResolvedJob, WhatEachCommandResolvesComesBackWhole) {
  const std::vector<std::vector<std::string>> trains = {
      {},
      {"--workers",   "4",      "--split",   "10,20,30,68",   "--slowdown", "1,1,2,4",           "--slowdown-schedule",
       "50=1,1,1,8",  "--comm", "flat",      "--policy",      "bno",        "--lr-decay",        "cosine",
       "--optimizer", "adam",   "--elastic", "--min-workers", "2",          "--memory-limit-mb", "512",
       "--threads",   "2"},
      {"--workers", "2", "--comm", "hybrid", "--model", "mlp", "--label-smoothing", "0.1"},
      {"--workers", "4", "--pipeline-stages", "2", "--schedule", "gpipe", "--partition", "flops"},
      {"--workers", "2", "--global-batch", "auto:32:512", "--lr-scaling", "sqrt"},
      {"--workers", "2", "--comm", "ps", "--ps", "1", "--staleness", "2", "--node-speed", "100,50"},
      {"--workers", "3", "--devices", "cpu,cpu,cpu", "--backend", "gloo"}};
  for (const auto& words : trains) {
    const auto c = parseTrainCommandLine(words);
    expectTheSameJobBack(c);
    EXPECT_EQ(job::jobConfigFromJson(job::jobConfigJson(c)).split, c.split);
  }
  expectTheSameJobBack(parseFederateCommandLine({"--clients", "3", "--strategy", "fedbuff", "--local-steps", "5:20"}));
  const auto iid = parseFederateCommandLine({"--clients", "2", "--alpha", "iid"});
  expectTheSameJobBack(iid);
  EXPECT_EQ(job::jobConfigFromJson(job::jobConfigJson(iid)).federated->alpha, iid.federated->alpha);
  expectTheSameJobBack(parseLaunchFlags({"--workers", "3", "--split", "1,2,3", "--policy", "equal"}));
}

TEST_F(ResolvedJob, HostsRunningAnotherWorldGetItsDefaults) {
  // Two hosts of two workers assumed: an equal split of 128 over 4.
  const std::vector<std::string> words{"--nnodes",      "2",         "--nproc-per-node", "2",
                                       "--master-addr", "127.0.0.1", "--master-port",    "29500"};
  auto c = parseTrainCommandLine(words);
  ASSERT_EQ(c.split.worldSize(), 4);
  EXPECT_TRUE(c.launch.assumedWorldFlags.empty());
  c.launch.hostWorkers = {2, 1};  // what the hosts' meeting found
  const auto again = parseTrainCommandLine(withAgreedHosts(words, c.launch));
  EXPECT_EQ(again.launch.worldSize(), 3);
  EXPECT_EQ(again.split.worldSize(), 3);
  EXPECT_EQ(again.split.total(), 128);
}

}  // namespace
}  // namespace balancenet::cli

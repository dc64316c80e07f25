// --nproc-per-node on hosts of different sizes: one count (this host's) or one per host by node rank, and the
// flags a launcher of one count checks against an assumed world (named again at the hosts' meeting).
#include <gtest/gtest.h>

#include "balancenet/cli/FederateCommand.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

using balancenet::testing::expectOneLineUsageError;
using balancenet::testing::usageErrorOf;

class HostCountsFlags : public LauncherViewTest {};

std::vector<std::string> hostFlags(int nodeRank, const std::string& counts, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"--nnodes",         "2",    "--node-rank",   std::to_string(nodeRank),
                                "--nproc-per-node", counts, "--master-port", "29500"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

void expectHostsRefused(const std::vector<std::string>& args, const std::string& fragment) {
  expectOneLineUsageError([&] { parseTrainCommandLine(args); }, fragment);
}

TEST_F(HostCountsFlags, TheListFormGivesEveryHostItsCountAndTheWorld) {
  const auto c = parseTrainCommandLine(hostFlags(1, "3,1", {"--split", "1,1,1,5", "--global-batch", "8"}));
  EXPECT_EQ(c.launch.nprocPerNode, 1);  // this host's entry
  EXPECT_EQ(c.launch.hostWorkers, (std::vector<int>{3, 1}));
  EXPECT_EQ(c.launch.worldSize(), 4);
  EXPECT_EQ(c.launch.firstRank(), 3);
  EXPECT_EQ(c.split.batches, (std::vector<int64_t>{1, 1, 1, 5}));
  EXPECT_TRUE(c.launch.assumedWorldFlags.empty());  // nothing to check again at the meeting
  expectHostsRefused(hostFlags(0, "3,2", {"--pipeline-stages", "2"}),
                     "--nproc-per-node 3,2 = 5 workers is not a multiple of --pipeline-stages 2");
  expectHostsRefused(hostFlags(0, "3,1", {"--split", "1,1,6", "--global-batch", "8"}), "--split");
}

TEST_F(HostCountsFlags, BadCountsAreOneLine) {
  expectHostsRefused(hostFlags(0, "3,1,2"), "--nproc-per-node 3,1,2 has 3 counts but --nnodes is 2: one per host");
  expectHostsRefused(hostFlags(0, "0"), "--nproc-per-node must be this host's worker count (at least 1)");
  expectHostsRefused(hostFlags(0, "2,0"), "got '2,0'");
  expectHostsRefused({"--nproc-per-node", "two"}, "got 'two'");
}

TEST_F(HostCountsFlags, OneCountOnSeveralHostsNamesTheFlagsCheckedAgainstAnAssumedWorld) {
  const auto plain = parseTrainCommandLine(hostFlags(0, "2"));
  EXPECT_TRUE(plain.launch.hostWorkers.empty());
  EXPECT_TRUE(plain.launch.assumedWorldFlags.empty());
  const auto assuming =
      parseTrainCommandLine(hostFlags(0, "2",
                                      {"--split", "1,1,1,5", "--global-batch", "8", "--node-speed", "9,9,9,9",
                                       "--min-workers", "2", "--elastic", "--memory-limit-mb", "0,0,0,900"}));
  EXPECT_EQ(assuming.launch.assumedWorldFlags,
            (std::vector<std::string>{"--split", "--memory-limit-mb", "--node-speed", "--min-workers"}));
  // Refused against the assumed world: the message says it was assumed, and names the list form.
  expectHostsRefused(hostFlags(0, "2", {"--node-speed", "9,9,9"}),
                     "--node-speed has 3 values but the job has 4 workers (this launcher assumes --nnodes 2 x "
                     "--nproc-per-node 2 = 4 workers until the hosts meet; if hosts run different counts, give every "
                     "host the list, e.g. --nproc-per-node 2,1)");
  expectHostsRefused(hostFlags(0, "2", {"--steps", "0"}), "--steps must be at least 1");  // no hint without such flags
  // One host: its count is the world.
  EXPECT_TRUE(parseTrainCommandLine({"--nproc-per-node", "2", "--split", "1,1", "--global-batch", "2"})
                  .launch.assumedWorldFlags.empty());
}

TEST_F(HostCountsFlags, FederateTakesTheListForm) {
  const auto c = parseFederateCommandLine(hostFlags(0, "3,1", {"--clients", "3"}));
  EXPECT_EQ(c.launch.worldSize(), 4);
  const auto message = usageErrorOf([] { parseFederateCommandLine(hostFlags(0, "3,2", {"--clients", "3"})); });
  EXPECT_NE(message.find("--nproc-per-node 3,2 makes 5 processes; they must be --clients 3 + 1"), std::string::npos)
      << message;
  EXPECT_EQ(parseFederateCommandLine(hostFlags(0, "2", {"--clients", "3"})).launch.assumedWorldFlags,
            std::vector<std::string>{"--clients"});
}

}  // namespace
}  // namespace balancenet::cli

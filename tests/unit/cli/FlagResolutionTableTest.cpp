// The train flags' derived values as a table: each row the words given and what the job resolves to (the split, the
// policy, --lr-scaling for the optimiser, the devices, this host's workers), each derived value settled once from
// the values given, whatever the order of the words. A row that a check refuses names the words of its one line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "balancenet/cli/flags/DeviceFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

struct Resolved {
  std::vector<int64_t> split;
  std::string policy;
  std::string lrScaling;
  std::string device;  // config.device.device
  int hostWorkers;     // config.launch.nprocPerNode
};

struct Row {
  std::vector<std::string> words;
  Resolved expected;
};

class FlagResolution : public LauncherViewTest {};

void expectRow(const Row& row) {
  for (bool reversed : {false, true}) {
    // Pairs of words (a flag and its value) reversed: no check depends on which flag came first.
    std::vector<std::string> words = row.words;
    if (reversed) {
      std::vector<std::string> pairs;
      for (size_t i = words.size(); i >= 2; i -= 2) pairs.insert(pairs.end(), {words[i - 2], words[i - 1]});
      words = pairs;
    }
    SCOPED_TRACE(fmt::format("train {}", fmt::join(words, " ")));
    const auto c = parseTrainCommandLine(words);
    EXPECT_EQ(c.split.batches, row.expected.split);
    EXPECT_EQ(c.split.total(), c.trainer.globalBatch);
    EXPECT_EQ(c.orchestration.policy, row.expected.policy);
    EXPECT_EQ(c.orchestration.batchSizing.lrScaling, row.expected.lrScaling);
    EXPECT_EQ(c.device.device, row.expected.device);
    EXPECT_EQ(c.launch.nprocPerNode, row.expected.hostWorkers);
  }
}

TEST_F(FlagResolution, EachDerivedValueFollowsFromTheValuesGiven) {
  const std::vector<Row> rows = {
      // The defaults: balanced from an equal split; SGD's --lr-scaling auto is adascale.
      {{"--workers", "4"}, {{32, 32, 32, 32}, "balanced", "adascale", "auto", 4}},
      {{"--workers", "4", "--optimizer", "adam"}, {{32, 32, 32, 32}, "balanced", "sqrt", "auto", 4}},
      // A split given: static, and the global batch is its sum.
      {{"--workers", "3", "--global-batch", "60", "--split", "10,20,30"},
       {{10, 20, 30}, "static", "adascale", "auto", 3}},
      // --lr-scaling as given, with a schedule's first B.
      {{"--workers", "2", "--global-batch", "64,128@10", "--lr-scaling", "linear"},
       {{32, 32}, "balanced", "linear", "auto", 2}},
      // SSP: equal by default, and under --policy equal even where --split is given; static keeps the split.
      {{"--workers", "3", "--comm", "ps", "--ps", "1", "--staleness", "2", "--global-batch", "60"},
       {{20, 20, 20}, "equal", "adascale", "cpu", 3}},
      {{"--workers", "3", "--comm", "ps", "--ps", "1", "--staleness", "2", "--global-batch", "60", "--policy", "equal",
        "--split", "10,20,30"},
       {{20, 20, 20}, "equal", "adascale", "cpu", 3}},
      {{"--workers", "3", "--comm", "ps", "--ps", "1", "--staleness", "2", "--global-batch", "60", "--split",
        "10,20,30"},
       {{10, 20, 30}, "static", "adascale", "cpu", 3}},
      // Without staleness --policy equal starts from the split given (the policy rebalances).
      {{"--workers", "3", "--global-batch", "60", "--policy", "equal", "--split", "10,20,30"},
       {{10, 20, 30}, "equal", "adascale", "auto", 3}},
      // --device auto settles on the CPU where the way of training is not on GPUs yet; cpu stays cpu.
      {{"--workers", "4", "--pipeline-stages", "2"}, {{64, 64}, "balanced", "adascale", "cpu", 4}},
      {{"--workers", "2", "--device", "cpu"}, {{64, 64}, "balanced", "adascale", "cpu", 2}},
      // This host's workers: --workers, or its entry of --nproc-per-node's list by node rank.
      {{"--nnodes", "2", "--nproc-per-node", "3,1", "--node-rank", "1", "--master-port", "29500"},
       {{32, 32, 32, 32}, "balanced", "adascale", "auto", 1}},
      {{"--nnodes", "2", "--nproc-per-node", "3,1", "--node-rank", "0", "--master-port", "29500"},
       {{32, 32, 32, 32}, "balanced", "adascale", "auto", 3}},
  };
  for (const auto& row : rows) expectRow(row);
}

TEST_F(FlagResolution, ARowThatCannotWorkIsOneLineNamingIt) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> rows = {
      {{"--workers", "2", "--device", "cuda", "--comm", "ps", "--ps", "1"}, "parameter servers (--comm ps)"},
      {{"--workers", "4", "--device", "cuda:0", "--pipeline-stages", "2"}, "pipeline stages (--pipeline-stages)"},
      {{"--workers", "2", "--lr-scaling", "cubic"}, "--lr-scaling"},
      {{"--nnodes", "2", "--workers", "2", "--master-port", "29500"}, "--workers is for one host"},
      {{"--nnodes", "3", "--nproc-per-node", "3,1", "--master-port", "29500"}, "has 2 counts but --nnodes is 3"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(fmt::format("train {}", fmt::join(row.first, " ")));
    balancenet::testing::expectOneLineUsageError([&] { parseTrainCommandLine(row.first); }, row.second);
  }
}

// The devices' rule alone, as a pure function: what is given, unless the way of training is not on GPUs yet.
TEST(SettleDevices, AutoSettlesOnTheCpuWhereGpusCannotServeAndCudaIsRefused) {
  const DeviceRaw mixed{"auto", "cuda:0,cpu", "nccl"};
  const auto kept = settleDevices(givenDevices(mixed), "");
  EXPECT_EQ(kept.device, "auto");
  EXPECT_EQ(kept.devices, (std::vector<std::string>{"cuda:0", "cpu"}));
  EXPECT_EQ(kept.backend, "nccl");
  const auto settled =
      settleDevices(givenDevices(DeviceRaw{"auto", "", "auto"}), "pipeline stages (--pipeline-stages)");
  EXPECT_EQ(settled.device, "cpu");
  EXPECT_TRUE(settled.devices.empty());
  EXPECT_EQ(settleDevices(givenDevices(DeviceRaw{"cpu", "", "gloo"}), "parameter servers (--comm ps)").backend, "gloo");
  balancenet::testing::expectOneLineUsageError(
      [&] {
        settleDevices(givenDevices(DeviceRaw{"cuda", "", "auto"}), "parameter servers");
      },
      "parameter servers: not on GPU workers yet");
}

}  // namespace
}  // namespace balancenet::cli

// --config files: underscores or dashes in keys, and a key given twice is an error, not a silent choice.
#include <gtest/gtest.h>

#include <fstream>

#include <CLI/CLI.hpp>

#include "balancenet/cli/YamlConfig.h"
#include "balancenet/cli/flags/FlagValues.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/job/JobDefaults.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

using balancenet::testing::usageErrorOf;

class YamlConfig : public ::testing::Test {
 protected:
  JobConfig parseWith(const std::string& yaml, std::vector<std::string> more = {}) {
    std::ofstream(dir_.file("run.yaml")) << yaml;
    std::vector<std::string> args{"--config", dir_.file("run.yaml")};
    args.insert(args.end(), more.begin(), more.end());
    return parseTrainCommandLine(args);
  }
  std::string refusal(const std::string& yaml) {
    return usageErrorOf([&] { parseWith(yaml); });
  }
  balancenet::testing::TempDir dir_;
};

TEST_F(YamlConfig, UnderscoresAndDashesAreTheSameKey) {
  const auto c = parseWith("global_batch: 64\nlr_min: 0.01\nsync_bn: false\nmax-restarts: 0\n");
  EXPECT_EQ(c.trainer.globalBatch, 64);
  EXPECT_DOUBLE_EQ(c.trainer.lr.minLr, 0.01);
}

TEST_F(YamlConfig, PipelineKeysAreFlagsToo) {
  const auto c = parseWith(
      "workers: 4\npipeline_stages: 2\nmicro-batches: 6\nschedule: gpipe\npartition: 0-2,3-5\nsplit: [10, 22]\n"
      "global_batch: 32\nmemory_limit_mb: 300\n");
  EXPECT_EQ(c.pipeline.stages, 2);
  EXPECT_EQ(c.pipeline.microBatches, 6);
  EXPECT_EQ(c.pipeline.schedule, "gpipe");
  EXPECT_EQ(c.pipeline.partition, "0-2,3-5");
  EXPECT_EQ(c.split.batches, (std::vector<int64_t>{10, 22}));
  EXPECT_EQ(c.memoryLimitMb, std::vector<double>(c.launch.worldSize(), 300));
}

TEST_F(YamlConfig, CommandLineOverridesTheFile) {
  EXPECT_EQ(parseWith("steps: 3\n", {"--steps", "9"}).trainer.steps, 9);
}

TEST_F(YamlConfig, KeyGivenTwiceIsRefusedNamingIt) {
  EXPECT_NE(refusal("steps: 3\nmodel: mlp\nsteps: 4\n").find("config key 'steps' is given twice"), std::string::npos)
      << refusal("steps: 3\nsteps: 4\n");
  const auto spellings = refusal("global-batch: 32\nglobal_batch: 64\n");
  EXPECT_NE(spellings.find("config key 'global_batch' is given twice"), std::string::npos) << spellings;
  EXPECT_NE(spellings.find("'global-batch'"), std::string::npos) << spellings;
  const auto alias = refusal("workers: 2\nnodes: 3\n");
  EXPECT_NE(alias.find("config key 'nodes' is given twice"), std::string::npos) << alias;
}

// What --print-config prints for `train` given these words.
std::string printedConfig(const std::vector<std::string>& words) {
  CLI::App train{"balancenet train", "train"};
  JobConfig config = job::defaultJobConfig();
  RawFlags raw;
  addTrainFlags(train, config, raw);
  parseSubcommandWords(train, words);
  return effectiveConfigYaml(train);
}

// Issue 56: an unset number (--ps, --staleness) was printed as its mark, 'staleness: -2147483648'.
TEST(PrintConfig, LeavesOutUnsetNumbersAsItDoesOtherUnsetValues) {
  const std::string yaml = printedConfig({});
  EXPECT_EQ(yaml.find(std::to_string(kUnset)), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("\nps:"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("\nstaleness:"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\ncomm: auto\nbucket-mb: 25\n"), std::string::npos) << yaml;
}

TEST(PrintConfig, PrintsGivenNumbersAsGiven) {
  const std::string yaml = printedConfig({"--comm", "ps", "--ps", "2", "--staleness", "0", "--workers", "2"});
  EXPECT_NE(yaml.find("\ncomm: ps\nps: 2\nstaleness: 0\nbucket-mb: 25\n"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.rfind("workers: 2\nnnodes: 1\n", 0), 0u) << yaml;
}

TEST_F(YamlConfig, UnknownKeyIsStillRefused) {
  EXPECT_NE(refusal("modle: mlp\n").find("unknown key 'modle'"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::cli

// checkBeforeLaunch: the checks the train and federate commands run before handing a job to the launcher
// (which no longer checks anything itself): the data set, --pipeline-stages auto, the placement.
#include "balancenet/cli/LaunchChecks.h"

#include <gtest/gtest.h>

#include "balancenet/cli/flags/TrainFlags.h"
#include "testing/LauncherViewTest.h"
#include "testing/SyntheticData.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

using balancenet::testing::usageErrorOf;

class LaunchChecks : public LauncherViewTest {
 protected:
  void SetUp() override {
    LauncherViewTest::SetUp();
    testing::writeSyntheticMnistDir(data_.path(), 64, 16);
  }
  // `args` with the synthetic data set.
  job::JobConfig parse(std::vector<std::string> args) const {
    args.insert(args.end(), {"--data-dir", data_.path()});
    return parseTrainCommandLine(args);
  }
  testing::TempDir data_;
};

TEST_F(LaunchChecks, AnUnreadableDataSetIsOneUsageError) {
  testing::TempDir empty;
  const auto config = parseTrainCommandLine({"--nodes", "2", "--data-dir", empty.path()});
  const auto message = usageErrorOf([&] { checkBeforeLaunch(config); });
  EXPECT_NE(message.find(empty.path()), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(LaunchChecks, TheJobIsReturnedAsGiven) {
  const auto checked = checkBeforeLaunch(parse({"--nodes", "2", "--model", "mlp", "--pipeline-stages", "2"}));
  EXPECT_EQ(checked.pipeline.stages, 2);
  EXPECT_EQ(checked.launch.worldSize(), 2);
}

TEST_F(LaunchChecks, ThePlacementIsChecked) {
  const auto config = parse({"--nodes", "2", "--model", "mlp", "--pipeline-stages", "2", "--partition", "0,1-99"});
  const auto message = usageErrorOf([&] { checkBeforeLaunch(config); });
  EXPECT_NE(message.find("--partition"), std::string::npos) << message;
}

TEST_F(LaunchChecks, AutoStagesAreResolvedBeforeLaunch) {
  const auto config = parse({"--nodes", "2", "--model", "mlp", "--pipeline-stages", "auto"});
  ASSERT_EQ(config.pipeline.stages, job::kAutoStages);
  const auto checked = checkBeforeLaunch(config);
  EXPECT_GE(checked.pipeline.stages, 1);
  EXPECT_EQ(2 % checked.pipeline.stages, 0);
}

}  // namespace
}  // namespace balancenet::cli

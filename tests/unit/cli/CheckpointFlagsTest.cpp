// validateCheckpointFlags: the checkpoint flags checked once, so train and federate refuse them in the same words.
#include <gtest/gtest.h>

#include "balancenet/cli/FederateCommand.h"
#include "balancenet/cli/flags/CheckpointFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
using job::CheckpointOptions;
namespace {

using balancenet::testing::usageErrorOf;

class CheckpointFlagsTest : public LauncherViewTest {};

TEST_F(CheckpointFlagsTest, TrainAndFederateRefuseTheSameValuesInTheSameWords) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--resume"}, "--resume needs --checkpoint-dir"},
      {{"--checkpoint-dir", "ck", "--checkpoint-every", "0"}, "--checkpoint-every must be at least 1, got 0"},
      {{"--checkpoint-dir", "ck", "--keep-checkpoints", "-2"}, "--keep-checkpoints must be at least 1, got -2"},
  };
  for (const auto& c : cases) {
    const auto& args = c.first;  // not a structured binding: the lambdas capture it (clang allows that from C++20)
    const auto& message = c.second;
    EXPECT_EQ(usageErrorOf([&] { parseTrainCommandLine(args); }), message);
    EXPECT_EQ(usageErrorOf([&] { parseFederateCommandLine(args); }), message);
  }
}

TEST_F(CheckpointFlagsTest, ValuesWithoutADirectoryAreHarmlessDefaults) {
  CheckpointOptions o;
  o.every = 0;
  o.keep = 0;
  EXPECT_NO_THROW(validateCheckpointFlags(o));  // --print-config writes them; nothing is saved
  o.dir = "ck";
  EXPECT_EQ(usageErrorOf([&] { validateCheckpointFlags(o); }), "--checkpoint-every must be at least 1, got 0");
  o.every = 5;
  o.keep = 2;
  o.resume = true;
  EXPECT_NO_THROW(validateCheckpointFlags(o));
}

}  // namespace
}  // namespace balancenet::cli

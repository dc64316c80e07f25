// checkPlacement: --partition against the model's blocks and --memory-limit-mb against each worker's estimate,
// refused in one line before any worker starts; the suggested --pipeline-stages is one the check accepts.
#include "balancenet/cli/PlacementCheck.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "balancenet/cli/flags/TrainFlags.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

using balancenet::testing::usageErrorOf;

class PlacementCheck : public LauncherViewTest {
 protected:
  // The placement check's refusal of a command line that validation accepts, "<no UsageError>" if none.
  static std::string refusal(const std::vector<std::string>& args) {
    const auto config = parseTrainCommandLine(args);
    return usageErrorOf([&] { checkPlacement(config); });
  }
};

constexpr const char* kAccepted = "<no UsageError>";

TEST_F(PlacementCheck, PartitionIsCheckedAgainstTheModelsBlocks) {
  EXPECT_EQ(refusal({"--model", "mlp", "--nodes", "2", "--pipeline-stages", "2"}), kAccepted);
  const auto beyond = refusal({"--model", "mlp", "--nodes", "2", "--pipeline-stages", "2", "--partition", "0,1-99"});
  EXPECT_NE(beyond.find("--partition"), std::string::npos) << beyond;
  EXPECT_EQ(beyond.find('\n'), std::string::npos) << beyond;
  const auto gap = refusal(
      {"--model", "vgg16", "--width", "0.25", "--nodes", "2", "--pipeline-stages", "2", "--partition", "0-3,5-99"});
  EXPECT_NE(gap.find("--partition"), std::string::npos) << gap;
  // More stages than the model has blocks: the uniform cut names the model's block count.
  const auto tooMany = refusal({"--model", "mlp", "--nodes", "64", "--pipeline-stages", "64", "--global-batch", "64"});
  EXPECT_NE(tooMany.find("block"), std::string::npos) << tooMany;
}

TEST_F(PlacementCheck, NoLimitMeansNoMemoryRefusal) {
  EXPECT_EQ(refusal({"--model", "vgg16", "--width", "0.25", "--nodes", "2", "--global-batch", "4096"}), kAccepted);
  EXPECT_EQ(refusal({"--model", "mlp", "--memory-limit-mb", "100000"}), kAccepted);
}

// The suggested K, parsed from "try --pipeline-stages K", or 0.
int suggestedStages(const std::string& message) {
  std::smatch m;
  static const std::regex kHint("try --pipeline-stages (\\d+)");
  return std::regex_search(message, m, kHint) ? std::stoi(m[1]) : 0;
}

TEST_F(PlacementCheck, DataParallelismOverTheLimitSuggestsTheSmallestStagesThatFit) {
  const std::vector<std::string> job{"--model", "vgg16", "--width", "0.25", "--nodes", "8", "--global-batch", "512"};
  auto with = [&](const std::string& limitMb, std::vector<std::string> more = {}) {
    auto args = job;
    args.insert(args.end(), {"--memory-limit-mb", limitMb});
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  // Nothing fits 0.01 MB: one line, the whole model on the worker with the largest share, no hint.
  const auto nothing = refusal(with("0.01", {"--split", "8,8,8,8,8,8,8,456"}));
  EXPECT_NE(nothing.find("node 7 (the whole model)"), std::string::npos) << nothing;
  EXPECT_NE(nothing.find("--memory-limit-mb 0.01"), std::string::npos) << nothing;
  EXPECT_EQ(suggestedStages(nothing), 0) << nothing;
  // Lower the limit until data parallelism is refused with a hint; the hint must then be accepted, and the
  // smaller powers of two refused.
  bool hinted = false;
  for (double limit = 64; limit > 0.05 && !hinted; limit /= 2) {
    const auto message = refusal(with(std::to_string(limit)));
    if (message == kAccepted) continue;
    EXPECT_NE(message.find("(the whole model)"), std::string::npos) << message;
    const int k = suggestedStages(message);
    if (k == 0) break;
    hinted = true;
    EXPECT_EQ(refusal(with(std::to_string(limit), {"--pipeline-stages", std::to_string(k)})), kAccepted) << message;
    for (int smaller = 2; smaller < k; smaller *= 2)
      EXPECT_NE(refusal(with(std::to_string(limit), {"--pipeline-stages", std::to_string(smaller)})), kAccepted)
          << "--pipeline-stages " << smaller << " fits too, but " << message;
  }
  EXPECT_TRUE(hinted) << "no limit between 64 MB and 0.05 MB refused data parallelism with a hint";
}

TEST_F(PlacementCheck, PipelineOverTheLimitNamesTheStageAndItsBlocks) {
  const auto message = refusal(
      {"--model", "vgg16", "--width", "0.25", "--nodes", "4", "--pipeline-stages", "2", "--memory-limit-mb", "0.01"});
  EXPECT_TRUE(std::regex_search(message, std::regex("node [01] \\(stage [01], blocks \\d+-\\d+\\)"))) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// One capped worker: each worker is checked against its own cap, so data parallelism is refused naming that
// worker; with --partition auto the planner decides, refusing only when no placement of the shape fits.
TEST_F(PlacementCheck, EachWorkerHasItsOwnCapAndAutoAsksThePlanner) {
  const std::vector<std::string> job{"--model", "vgg16",       "--width", "0.25",    "--global-batch",
                                     "64",      "--optimizer", "adam",    "--nodes", "4"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), job.begin(), job.end());
    return more;
  };
  const auto dp = refusal(with({"--memory-limit-mb", "0,0,0,20"}));
  EXPECT_NE(dp.find("node 3 (the whole model)"), std::string::npos) << dp;
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,0,0,20", "--pipeline-stages", "2", "--partition", "auto"})),
            kAccepted);
  const auto none = refusal(with({"--memory-limit-mb", "0.01", "--pipeline-stages", "2", "--partition", "auto"}));
  EXPECT_NE(none, kAccepted);
  EXPECT_EQ(none.find('\n'), std::string::npos) << none;
}

// A worker whose share does not fit in one pass: --accumulate K is checked at the share's K-th (32 samples in 8
// passes of 4 fit where 32 in one did not), and the refusal suggests --accumulate auto, which fits any worker whose
// memory holds one sample beside the state; a cap below that is refused under auto too, without the suggestion.
TEST_F(PlacementCheck, MicroStepsFitAShareInPassesAndTheRefusalSaysSo) {
  const std::vector<std::string> job{"--model", "cnn", "--nodes", "2", "--global-batch", "64"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), job.begin(), job.end());
    return more;
  };
  const auto onePass = refusal(with({"--memory-limit-mb", "0,22"}));
  EXPECT_NE(onePass.find("node 1 (the whole model)"), std::string::npos) << onePass;
  EXPECT_NE(onePass.find("--accumulate auto (the share in passes that fit)"), std::string::npos) << onePass;
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,22", "--accumulate", "8"})), kAccepted);
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,22", "--accumulate", "auto"})), kAccepted);
  const auto noSample = refusal(with({"--memory-limit-mb", "0,14", "--accumulate", "auto"}));
  EXPECT_NE(noSample.find("above --memory-limit-mb 14"), std::string::npos) << noSample;
  EXPECT_EQ(noSample.find("--accumulate auto (the share"), std::string::npos) << noSample;
  // The sgd state beside one sample is above 14 MiB, its slices beside one sample are not.
  EXPECT_NE(noSample.find("or --shard-state (the optimiser state in slices by memory)"), std::string::npos) << noSample;
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,14"})).find("--accumulate auto (the share"), std::string::npos);
}

// resnet18 at a quarter width keeps about 1.9 MB a sample, 0.5 MB recomputed (the blocks' inputs and one block):
// 40 MiB holds 17 of a 32-sample share in one pass, all of it recomputed. The refusal names --recompute auto, which
// fits; a cap that holds the state and one recomputed sample only needs passes as well.
TEST_F(PlacementCheck, RecomputationFitsAShareInOnePassAndTheRefusalSaysSo) {
  const std::vector<std::string> job{"--model", "resnet18", "--width", "0.25", "--nodes", "2", "--global-batch", "64"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), job.begin(), job.end());
    return more;
  };
  const auto kept = refusal(with({"--memory-limit-mb", "0,40"}));
  EXPECT_NE(kept.find("or --recompute auto (the blocks' activations rebuilt in backward)"), std::string::npos) << kept;
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,40", "--recompute", "auto"})), kAccepted);
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,40", "--recompute", "blocks"})), kAccepted);
  const auto tight = refusal(with({"--memory-limit-mb", "0,12"}));
  EXPECT_NE(tight.find("--recompute auto (the blocks' activations rebuilt in backward) with --accumulate auto"),
            std::string::npos)
      << tight;
  EXPECT_EQ(refusal(with({"--memory-limit-mb", "0,12", "--recompute", "auto", "--accumulate", "auto"})), kAccepted);
}

// Adam's state alone (16 bytes a parameter, 18.3 MiB for the cnn) is above a 17 MiB cap: no number of passes fits,
// slices of the state do (8 bytes a parameter and half the slots each); the refusal says so and --shard-state fits.
TEST_F(PlacementCheck, StateThatFitsNoWorkerWholeFitsInSlices) {
  const std::vector<std::string> job{"--model",     "cnn",  "--nodes",           "2", "--global-batch", "4",
                                     "--optimizer", "adam", "--memory-limit-mb", "17"};
  const auto whole = refusal(job);
  EXPECT_NE(whole.find("--shard-state (the optimiser state in slices by memory)"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("--accumulate auto"), std::string::npos) << whole;
  auto sharded = job;
  sharded.push_back("--shard-state");
  EXPECT_EQ(refusal(sharded), kAccepted);
}

// 1F1B holds at most S - s micro-batches at stage s, GPipe all M: some limit admits the one and not the other.
TEST_F(PlacementCheck, GPipeHoldsMoreActivationsThan1F1B) {
  const std::vector<std::string> job{"--model",           "vgg16", "--width",         "0.25", "--nodes",        "2",
                                     "--pipeline-stages", "2",     "--micro-batches", "16",   "--global-batch", "512"};
  auto refusedWith = [&](const std::string& schedule, double limit) {
    auto args = job;
    args.insert(args.end(), {"--schedule", schedule, "--memory-limit-mb", std::to_string(limit)});
    return refusal(args) != kAccepted;
  };
  bool separated = false;
  for (double limit = 256; limit > 0.05 && !separated; limit /= 1.5) {
    EXPECT_FALSE(refusedWith("1f1b", limit) && !refusedWith("gpipe", limit)) << limit;
    separated = !refusedWith("1f1b", limit) && refusedWith("gpipe", limit);
  }
  EXPECT_TRUE(separated);
}

// The modes `balancenet plan` prints, on the two jobs above: each fits where the start check accepts its flags.
TEST_F(PlacementCheck, DataParallelModesFitWhereTheirFlagsAreAccepted) {
  auto byFlags = [](const std::vector<DataParallelMode>& modes) {
    std::map<std::string, DataParallelMode> m;
    for (const auto& mode : modes) m[mode.flags] = mode;
    return m;
  };
  const std::vector<std::string> resnet{"--model",        "resnet18", "--width",           "0.25", "--nodes", "2",
                                        "--global-batch", "64",       "--memory-limit-mb", "0,40"};
  const auto modes = byFlags(dataParallelModes(parseTrainCommandLine(resnet)));
  ASSERT_EQ(modes.size(), 7u);
  EXPECT_FALSE(modes.at("").fits);
  EXPECT_EQ(modes.at("").tightest, 1);
  EXPECT_GT(modes.at("").mib[1], 40);
  EXPECT_TRUE(modes.at("--accumulate auto").fits);
  EXPECT_GT(modes.at("--accumulate auto").passes[1], 1);  // 32 samples in passes of 17 at most
  EXPECT_LE(modes.at("--accumulate auto").mib[1], 40);
  EXPECT_EQ(modes.at("--accumulate auto").passes[0], 1);  // no cap: one pass
  EXPECT_TRUE(modes.at("--recompute blocks").fits);
  EXPECT_EQ(modes.at("--recompute blocks").passes[1], 1);
  EXPECT_LT(modes.at("--recompute blocks").mib[1], modes.at("").mib[1] / 2);
  for (const auto& [flags, mode] : modes) {  // the start check agrees, mode by mode
    auto args = resnet;
    std::istringstream words(flags);
    for (std::string w; words >> w;) args.push_back(w);
    EXPECT_EQ(refusal(args) == kAccepted, mode.fits) << "'" << flags << "': " << refusal(args);
  }
  // Adam's state alone above the cap: only the sharded modes fit.
  const auto adam = byFlags(dataParallelModes(parseTrainCommandLine(
      {"--model", "cnn", "--nodes", "2", "--global-batch", "4", "--optimizer", "adam", "--memory-limit-mb", "17"})));
  for (const auto& [flags, mode] : adam)
    EXPECT_EQ(mode.fits, flags.find("--shard-state") != std::string::npos) << "'" << flags << "'";
}

}  // namespace
}  // namespace balancenet::cli

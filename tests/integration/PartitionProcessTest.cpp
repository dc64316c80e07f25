// Planned placements through the binary: --partition auto on a heterogeneous job puts the slow worker where it
// costs least and writes the planner's logs; `balancenet plan` prints placements; a worker whose memory cannot
// hold the whole model refuses data parallelism in one line and trains with a planned pipeline;
// --pipeline-stages auto chooses a shape and trains it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

namespace fs = std::filesystem;

class PartitionProcess : public BinaryFixture {
 protected:
  ProcessResult trainFor(std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--progress-seconds", "0", "--log-level", "info"});
    ProcessOptions o;
    o.timeoutSeconds = 120;
    return train(flags, o);
  }
};

// One announced stage: "stage 1: blocks 2-3 (fc1 .. fc2), 1234 parameters, 0.05 MFLOPs/sample, ranks 3,1".
struct AnnouncedStage {
  int blocks = 0;
  double mflops = 0;
  std::vector<int> ranks;  // by replica (column)
};

std::vector<AnnouncedStage> announcedStages(const std::string& output) {
  static const std::regex kStage(R"(stage (\d+): blocks (\d+)-(\d+) .*, ([0-9.]+) MFLOPs/sample, ranks ([0-9,]+))");
  std::vector<AnnouncedStage> stages;
  for (std::sregex_iterator it(output.begin(), output.end(), kStage), end; it != end; ++it) {
    const auto& m = *it;
    AnnouncedStage s;
    s.blocks = std::stoi(m[3]) - std::stoi(m[2]) + 1;
    s.mflops = std::stod(m[4]);
    std::stringstream ranks(m[5]);
    for (std::string r; std::getline(ranks, r, ',');) s.ranks.push_back(std::stoi(r));
    if (std::stoul(m[1]) == stages.size()) stages.push_back(s);
  }
  return stages;
}

// The split over the columns the run started from: "... split 40,24".
std::vector<int64_t> announcedSplit(const std::string& output) {
  std::smatch m;
  std::vector<int64_t> split;
  if (!std::regex_search(output, m, std::regex(R"(pipeline: .* split ([0-9,]+))"))) return split;
  std::stringstream shares(m[1]);
  for (std::string s; std::getline(shares, s, ',');) split.push_back(std::stoll(s));
  return split;
}

// Worker 3 is 4x slow: the plan puts it on the lighter stage (fewer blocks or FLOPs) or gives its column the
// smaller share; partitions.csv and stage_times.csv are in the run directory.
TEST_F(PartitionProcess, AutoPlacesTheSlowWorkerWhereItCostsLeast) {
  const auto r =
      trainFor({"--nodes", "4", "--pipeline-stages", "2", "--partition", "auto", "--slowdown", "1,1,1,4", "--model",
                "cnn", "--width", "0.25", "--global-batch", "64", "--steps", "4", "--rebalance-every", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto stages = announcedStages(r.output);
  ASSERT_EQ(stages.size(), 2u) << r.output;
  const auto split = announcedSplit(r.output);
  ASSERT_EQ(split.size(), 2u) << r.output;
  int slowStage = -1, slowColumn = -1;
  for (int s = 0; s < 2; ++s)
    for (int j = 0; j < 2; ++j)
      if (stages[s].ranks.at(j) == 3) slowStage = s, slowColumn = j;
  ASSERT_GE(slowStage, 0) << r.output;
  const auto& mine = stages[slowStage];
  const auto& other = stages[1 - slowStage];
  const bool lighterStage = mine.blocks < other.blocks || mine.mflops < other.mflops;
  const bool smallerShare = split[slowColumn] < split[1 - slowColumn];
  EXPECT_TRUE(lighterStage || smallerShare) << r.output;
  EXPECT_TRUE(fs::exists(dir_.file("run/partitions.csv"))) << r.output;
  EXPECT_TRUE(fs::exists(dir_.file("run/stage_times.csv"))) << r.output;
}

// `plan` ranks placements (best first, each with its predicted time) and explains the best; --json is one object;
// bad input is one line and exit 2.
TEST_F(PartitionProcess, PlanPrintsRankedPlacements) {
  const std::vector<std::string> job{"plan", "--nodes",    "4",       "--model", "cnn", "--width",
                                     "0.25", "--slowdown", "1,1,1,4", "--top",   "3"};
  const auto text = run(job);
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_TRUE(std::regex_search(text.output, std::regex(R"(\n1\. .*ms/step)"))) << text.output;
  EXPECT_FALSE(std::regex_search(text.output, std::regex(R"(\n4\. )"))) << text.output;

  auto jsonJob = job;
  jsonJob.push_back("--json");
  const auto json = run(jsonJob);
  ASSERT_EQ(json.exitCode, 0) << json.output;
  const auto parsed = nlohmann::json::parse(json.output.substr(json.output.find('{')));
  ASSERT_GE(parsed.at("placements").size(), 1u);
  EXPECT_LE(parsed.at("placements").size(), 3u);
  EXPECT_GT(parsed.at("placements")[0].at("step_ms").get<double>(), 0);

  expectOneLineError(run({"plan", "--nodes", "3", "--pipeline-stages", "2"}), "--pipeline-stages", 2);
}

// Adam's state fits no worker whole (cnn, 17 MiB caps): no placement the planner cuts fits, and `plan` says which
// data-parallel mode does (the sharded ones) instead of refusing; with no mode either, it refuses in one line.
TEST_F(PartitionProcess, PlanPrintsWhichDataParallelModeFitsWhere) {
  const std::vector<std::string> job{"plan", "--model", "cnn", "--nodes",           "2", "--global-batch",
                                     "4",    "--top",   "2",   "--memory-limit-mb", "17"};
  auto adam = job;
  adam.insert(adam.end(), {"--optimizer", "adam"});
  const auto text = run(adam);
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_NE(text.output.find("no placement the planner cuts fits"), std::string::npos) << text.output;
  EXPECT_TRUE(std::regex_search(text.output, std::regex(R"(\nreplicated, one pass .* no \(worker [01]\)\n)")))
      << text.output;
  EXPECT_TRUE(std::regex_search(text.output, std::regex(R"(\n--shard-state  .* yes\n)"))) << text.output;
  auto json = adam;
  json.push_back("--json");
  const auto parsed = nlohmann::json::parse(run(json).output);
  int fitting = 0;
  for (const auto& mode : parsed.at("data_parallel_modes")) fitting += mode.at("fits").get<bool>() ? 1 : 0;
  EXPECT_EQ(fitting, 3) << parsed.dump();  // the three sharded modes
  // sgd's state fits: the placements are ranked as before, and the table follows them.
  const auto sgd = run(job);
  ASSERT_EQ(sgd.exitCode, 0) << sgd.output;
  EXPECT_TRUE(std::regex_search(sgd.output, std::regex(R"(\n1\. .*ms/step)"))) << sgd.output;
  EXPECT_NE(sgd.output.find("data parallelism, shares by speed (2,2)"), std::string::npos) << sgd.output;
  auto none = job;
  none.back() = "5";
  expectOneLineError(run(none), "no placement fits every node's memory", 2);
}

// Worker 3 cannot hold vgg16 with its optimiser state: data parallelism is refused before training, naming it;
// a planned pipeline keeps the heavy layers off it and trains.
TEST_F(PartitionProcess, CappedWorkerRefusesDataParallelismButTrainsAPlannedPipeline) {
  const std::vector<std::string> job{"--model",           "vgg16",   "--width", "0.25", "--global-batch", "64",
                                     "--optimizer",       "adam",    "--nodes", "4",    "--steps",        "1",
                                     "--memory-limit-mb", "0,0,0,20"};
  auto dp = job;
  dp.insert(dp.end(), {"--progress-seconds", "0"});
  expectOneLineError(train(dp), "node 3 (the whole model)", 2);
  auto planned = job;
  planned.insert(planned.end(), {"--pipeline-stages", "2", "--partition", "auto"});
  const auto r = trainFor(planned);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // It trained as planned: two stages that split the model's 15 blocks, the capped worker holding one of them.
  const auto stages = announcedStages(r.output);
  ASSERT_EQ(stages.size(), 2u) << r.output;
  EXPECT_EQ(stages[0].blocks + stages[1].blocks, 15) << r.output;
  EXPECT_EQ(std::count(stages[0].ranks.begin(), stages[0].ranks.end(), 3) +
                std::count(stages[1].ranks.begin(), stages[1].ranks.end(), 3),
            1)
      << r.output;
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary.at("steps"), 1);
  EXPECT_EQ(summary.at("pipeline").at("stages"), 2) << summary.dump();
  EXPECT_EQ(summary.at("pipeline").at("partition").get<std::string>().find("auto"), std::string::npos);
}

// --pipeline-stages auto: the launcher ranks the shapes, says which it chose, and the job trains with it.
TEST_F(PartitionProcess, AutoStagesChoosesAShapeAndTrains) {
  const auto r = trainFor({"--nodes", "2", "--pipeline-stages", "auto", "--model", "cnn", "--width", "0.25",
                           "--global-batch", "32", "--steps", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("shapes ranked by predicted step time"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("chose --pipeline-stages [12]"))) << r.output;
}

}  // namespace
}  // namespace balancenet::testing

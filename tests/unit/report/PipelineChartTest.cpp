// pipeline.csv read back, a step's bubble per rank worked out by hand, and its picture.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "PipelineFixture.h"
#include "balancenet/core/Error.h"
#include "balancenet/report/PipelineChart.h"
#include "balancenet/report/PipelineTrace.h"
#include "testing/TempDir.h"

namespace balancenet::report {
namespace {

using fixture::kGpipeCsv;
using fixture::writeText;

std::vector<PipelineAction> gpipe(const testing::TempDir& dir) {
  writeText(dir.file("pipeline.csv"), kGpipeCsv);
  return readPipelineCsv(dir.file("pipeline.csv"));
}

TEST(PipelineTrace, ParsesEveryRow) {
  testing::TempDir dir;
  const auto actions = gpipe(dir);
  ASSERT_EQ(actions.size(), 16u);
  const auto& b = actions[10];  // 5,1,1,0,B,0,1004,1006
  EXPECT_EQ(b.step, 5);
  EXPECT_EQ(b.rank, 1);
  EXPECT_EQ(b.stage, 1);
  EXPECT_EQ(b.replica, 0);
  EXPECT_TRUE(b.backward);
  EXPECT_EQ(b.micro, 0);
  EXPECT_DOUBLE_EQ(b.startMs, 1004);
  EXPECT_DOUBLE_EQ(b.endMs, 1006);
  EXPECT_FALSE(actions[0].backward);
  EXPECT_DOUBLE_EQ(actions[0].endMs, 900.5);
}

TEST(PipelineTrace, PicksTheLastStepUnlessToldWhich) {
  testing::TempDir dir;
  const auto actions = gpipe(dir);
  EXPECT_EQ(actionsOfStep(actions).size(), 12u);
  EXPECT_EQ(actionsOfStep(actions).front().step, 5);
  EXPECT_EQ(actionsOfStep(actions, 4).size(), 4u);
  EXPECT_THROW(actionsOfStep(actions, 3), UsageError);
}

TEST(PipelineTrace, BubbleOfGpipeWithTwoStagesAndThreeMicroBatches) {
  testing::TempDir dir;
  const auto idle = pipelineIdle(actionsOfStep(gpipe(dir)));
  EXPECT_EQ(idle.step, 5);
  EXPECT_DOUBLE_EQ(idle.spanMs, 12);
  EXPECT_EQ(idle.stages, 2);
  EXPECT_EQ(idle.microBatches, 3);
  ASSERT_EQ(idle.ranks.size(), 2u);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(idle.ranks[s].stage, s);
    EXPECT_EQ(idle.ranks[s].rank, s);
    EXPECT_DOUBLE_EQ(idle.ranks[s].busyMs, 9);
    EXPECT_DOUBLE_EQ(idle.ranks[s].bubbleFraction, 0.25);
  }
  EXPECT_DOUBLE_EQ(idle.meanBubbleFraction, 0.25);
  // Step 4: each stage busy 1 of 2 ms.
  EXPECT_DOUBLE_EQ(pipelineIdle(actionsOfStep(gpipe(dir), 4)).ranks[1].bubbleFraction, 0.5);
}

TEST(PipelineTrace, OverlappingRecordsOfOneRankCountOnce) {
  // Rank 1 (stage 1) records 0-4 and 2-6 (overlapping), rank 0 0-1 and 9-10: span 10.
  const std::vector<PipelineAction> step = {{1, 1, 1, 0, false, 0, 0, 4},
                                            {1, 1, 1, 0, true, 0, 2, 6},
                                            {1, 0, 0, 0, false, 0, 0, 1},
                                            {1, 0, 0, 0, true, 0, 9, 10}};
  const auto idle = pipelineIdle(step);
  ASSERT_EQ(idle.ranks.size(), 2u);
  EXPECT_EQ(idle.ranks[0].rank, 0);  // stage 0 first
  EXPECT_DOUBLE_EQ(idle.ranks[0].bubbleFraction, 0.8);
  EXPECT_DOUBLE_EQ(idle.ranks[1].busyMs, 6);
  EXPECT_DOUBLE_EQ(idle.ranks[1].bubbleFraction, 0.4);
}

// The message of the UsageError that reading `text` as pipeline.csv throws; empty when none is thrown.
std::string readError(const std::string& text) {
  testing::TempDir dir;
  writeText(dir.file("pipeline.csv"), text);
  try {
    readPipelineCsv(dir.file("pipeline.csv"));
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

TEST(PipelineTrace, AMalformedFileIsAOneLineUsageError) {
  const std::string header = "step,rank,stage,replica,kind,micro,start_ms,end_ms\n";
  EXPECT_NE(readError(header + "5,0,0,0,X,0,1,2\n").find("line 2: kind 'X' is neither F"), std::string::npos);
  EXPECT_NE(readError(header + "5,0,0,0,F,0,1,2\n5,0,0,0,B,0,3,2.5\n").find("line 3: the action ends"),
            std::string::npos);
  EXPECT_NE(readError(header + "5,0,0,0,F,0,1,2x\n").find("end_ms '2x' is not a number"), std::string::npos);
  EXPECT_NE(readError(header + "5,0,0,0,F,0,nan,2\n").find("start_ms 'nan' is not a number"), std::string::npos);
  EXPECT_NE(readError(header + "5,0,-1,0,F,0,1,2\n").find("stage '-1' is not a whole number"), std::string::npos);
  EXPECT_NE(readError(header + "5,0,0,0,F\n").find("line 2: no micro field"), std::string::npos);
  EXPECT_NE(readError("step,rank,stage,kind,micro,start_ms,end_ms\n").find("no column 'replica'"), std::string::npos);
  EXPECT_NE(readError(header).find("no actions"), std::string::npos);
  EXPECT_NE(readError("").find("empty"), std::string::npos);
  for (const auto& bad : {header + "5,0,0,0,X,0,1,2\n", std::string("")})
    EXPECT_EQ(readError(bad).find('\n'), std::string::npos);
  EXPECT_EQ(readError(kGpipeCsv), "");
}

std::string text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PipelineChart, RendersTheLastStepWithALanePerStage) {
  testing::TempDir dir;
  const auto png = dir.file("pipeline.png");
  ASSERT_TRUE(renderPipelineChart(gpipe(dir), png, {-1, "gpipe"})) << "gnuplot (Debian's gnuplot-nox) is required";
  std::ifstream in(png, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
  const auto script = text(png + ".gp");
  EXPECT_NE(script.find("set ytics (\"stage 0\" 0, \"stage 1\" 1)"), std::string::npos);
  EXPECT_NE(script.find("set yrange [1.5:-0.5]"), std::string::npos);  // stage 0 on top
  EXPECT_NE(script.find("pipeline, step 5, gpipe"), std::string::npos);
  EXPECT_NE(script.find("set xrange [0:12]"), std::string::npos);  // ms from the step's first action
  // Forwards, backwards and the labels: 12 boxes of 1 or 2 ms in 12 are all wide enough for a digit.
  const auto data = text(png + ".dat");
  EXPECT_NE(data.find("0.5 0 0.5 0.35\n"), std::string::npos);  // stage 0's F0: 0-1 ms
  EXPECT_NE(data.find("11 0 1 0.35\n"), std::string::npos);     // stage 0's B2: 10-12 ms
  EXPECT_NE(data.find("11 0 2\n"), std::string::npos);          // its label, micro-batch 2
}

TEST(PipelineChart, ReplicatedStagesAreNamedByReplicaAndNarrowBoxesGoUnlabelled) {
  // 2 stages x 2 replicas, step 0; rank 3's forward is 0.1 ms of a 100 ms span: too narrow for its label.
  const std::vector<PipelineAction> actions = {{0, 0, 0, 0, false, 0, 0, 50},
                                               {0, 2, 0, 1, false, 7, 0, 50},
                                               {0, 1, 1, 0, false, 0, 50, 100},
                                               {0, 3, 1, 1, false, 9, 50, 50.1}};
  testing::TempDir dir;
  const auto png = dir.file("p.png");
  ASSERT_TRUE(renderPipelineChart(actions, png)) << "gnuplot (Debian's gnuplot-nox) is required";
  const auto script = text(png + ".gp");
  EXPECT_NE(script.find("(\"stage 0 / replica 0\" 0, \"stage 0 / replica 1\" 1, \"stage 1 / replica 0\" 2, "
                        "\"stage 1 / replica 1\" 3)"),
            std::string::npos);
  EXPECT_EQ(script.find("backward"), std::string::npos);  // no backward in the step: no empty block plotted
  const auto data = text(png + ".dat");
  EXPECT_NE(data.find("25 1 7\n"), std::string::npos);  // rank 2 (stage 0, replica 1): lane 1, micro 7
  EXPECT_EQ(data.find(" 9\n"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::report

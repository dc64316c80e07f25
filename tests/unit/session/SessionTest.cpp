// Session in a job of one: the data stream, steps of several batches, pacing, bad input and the run's files.
#include "balancenet/session/Session.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "balancenet/core/Stopwatch.h"
#include "testing/JobOfOne.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::session {
namespace {

TEST(Session, BatchesFollowTheGlobalPermutationAndAStepKeepsItsSplit) {
  testing::TempDir dir;
  Session s(testing::jobOfOneIn(dir.path()));
  ASSERT_EQ(s.worldSize(), 1);
  s.startData(100, 16, 7);
  data::GlobalPermutationSampler reference(100, 7);
  EXPECT_EQ(s.batchesPerPass(), 6);
  for (int64_t b = 0; b < 3; ++b) {
    const auto share = s.beginBatch();  // batches 0 and 1 are one step (accumulation), batch 2 the next
    EXPECT_EQ(share.batch, b);
    EXPECT_EQ(share.step, b < 2 ? 0 : 1);
    EXPECT_EQ(share.indices, reference.indicesAt(b * 16, 16));
    EXPECT_DOUBLE_EQ(share.weight, 1.0);
    if (b >= 1) s.endStep(0.5);
  }
  EXPECT_EQ(s.stepsDone(), 2);
  EXPECT_EQ(s.guessIndices(10), reference.indicesAt(160, 16));  // the stream goes on past the first pass
}

TEST(Session, RefusesDataItCannotSplit) {
  testing::TempDir dir;
  Session s(testing::jobOfOneIn(dir.path()));
  EXPECT_EQ(testing::usageErrorOf([&] { s.startData(10, 16, 0); }),
            "the dataset has 10 samples, fewer than one global batch of 16");
  EXPECT_EQ(testing::usageErrorOf([&] { s.beginBatch(); }), "no data yet: create the balancenet DataLoader first");
  EXPECT_EQ(testing::usageErrorOf([&] { s.endStep(0); }),
            "step_done() without a batch: take the step's batch from the balancenet DataLoader first");
  auto c = testing::jobOfOneIn(dir.path());
  c.split = Split{{8}};
  Session split(c);
  EXPECT_EQ(testing::usageErrorOf([&] { split.startData(100, 16, 0); }),
            "--split 8 sums to 8, but the DataLoader's global_batch is 16");
}

TEST(Session, ASlowdownStretchesTheComputeBeforeTheSync) {
  testing::TempDir dir;
  auto c = testing::jobOfOneIn(dir.path());
  c.emulation.slowdown = emulation::FactorSchedule::parse("--slowdown", "3", "--slowdown-schedule", "", 1);
  Session s(c);
  s.startData(64, 8, 0);
  Stopwatch real;
  s.beginBatch();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the "forward and backward"
  const double realMs = real.elapsedMs();
  s.backwardDone();  // sleeps twice the compute so far
  EXPECT_GE(real.elapsedMs(), 2.9 * realMs);
  s.endStep(1);
}

TEST(Session, FinishWritesTheRunFilesOnce) {
  testing::TempDir dir;
  Session s(testing::jobOfOneIn(dir.path()));
  s.startData(64, 8, 0);
  for (int i = 0; i < 3; ++i) {
    s.beginBatch();
    s.backwardDone();
    s.reduced();
    s.endStep(2.0 + i);
  }
  s.recordEval(0.75, 0.4);
  const auto summary = s.finish();
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(summary.steps, 3);
  EXPECT_DOUBLE_EQ(summary.finalLoss, 4.0);  // one rank: its loss is the whole batch's
  std::ifstream f(dir.file("summary.json"));
  const auto json = nlohmann::json::parse(f);
  EXPECT_EQ(json["driver"], "python");
  EXPECT_EQ(json["global_batch"], 8);
  EXPECT_TRUE(std::filesystem::exists(dir.file("steps.csv")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("splits.csv")));
  EXPECT_EQ(s.finish().steps, 3);  // again: the same, nothing collective
}

}  // namespace
}  // namespace balancenet::session

// A framework's checkpoint of the loop: the session goes on from it where the uninterrupted run would have been
// (steps, the next global batch, a step taken inside it resumed at its start), and text of another job is refused
// with one line.
#include "balancenet/session/LoopCheckpoint.h"

#include <gtest/gtest.h>

#include "balancenet/session/Session.h"
#include "testing/JobOfOne.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::session {
namespace {

TEST(LoopCheckpoint, EveryFieldComesBackAsItWas) {
  const LoopCheckpoint p{41, 83, 16, 2048, 7, 3, R"({"split":[8,4,4]})"};
  const auto back = decodeLoopCheckpoint(encodeLoopCheckpoint(p));
  EXPECT_EQ(back.step, 41);
  EXPECT_EQ(back.batch, 83);
  EXPECT_EQ(back.globalBatch, 16);
  EXPECT_EQ(back.datasetSize, 2048);
  EXPECT_EQ(back.seed, 7u);
  EXPECT_EQ(back.worldSize, 3);
  EXPECT_EQ(back.allocator, p.allocator);
}

TEST(LoopCheckpoint, TextOfAnotherKindIsOneLine) {
  EXPECT_EQ(testing::usageErrorOf([] { decodeLoopCheckpoint("not json"); }),
            "the checkpoint's balancenet state is not one this version wrote (format balancenet-loop-1)");
  const auto partial = testing::usageErrorOf([] { decodeLoopCheckpoint(R"({"format":"balancenet-loop-1"})"); });
  EXPECT_EQ(partial.rfind("the checkpoint's balancenet state is incomplete", 0), 0u) << partial;
}

TEST(LoopCheckpoint, ASessionGoesOnWhereTheCheckpointWas) {
  testing::TempDir dir;
  Session first(testing::jobOfOneIn(dir.path() + "/a"));
  first.startData(100, 16, 7);
  for (int b = 0; b < 4; ++b) {  // two steps of two batches each
    first.beginBatch();
    if (b % 2 == 1) first.endStep(0.5);
  }
  first.beginBatch();  // inside the third step: the checkpoint is still the second's end
  const auto saved = first.loopCheckpoint();

  Session second(testing::jobOfOneIn(dir.path() + "/b"));
  second.startData(100, 16, 7);
  second.restoreLoopCheckpoint(saved);
  EXPECT_EQ(second.stepsDone(), 2);
  EXPECT_EQ(second.nextBatch(), 4);
  const auto share = second.beginBatch();
  EXPECT_EQ(share.step, 2);
  EXPECT_EQ(share.indices, data::GlobalPermutationSampler(100, 7).indicesAt(4 * 16, 16));
}

TEST(LoopCheckpoint, ACheckpointOfOtherDataIsRefused) {
  testing::TempDir dir;
  Session first(testing::jobOfOneIn(dir.path() + "/a"));
  first.startData(100, 16, 7);
  const auto saved = first.loopCheckpoint();
  Session other(testing::jobOfOneIn(dir.path() + "/b"));
  other.startData(100, 20, 7);
  EXPECT_EQ(testing::usageErrorOf([&] { other.restoreLoopCheckpoint(saved); }),
            "the checkpoint was trained with global batch 16 over 100 samples (seed 7), this run has 20 over 100 "
            "(seed 7): resume with the same data and batch");
}

}  // namespace
}  // namespace balancenet::session

// RecomputeMemory: the peak over the forward and each block's backward, and auto's choice on the passes.
#include "balancenet/recompute/RecomputeMemory.h"

#include <gtest/gtest.h>

#include "balancenet/memory/PassFit.h"
#include "balancenet/recompute/RecomputeMode.h"
#include "testing/UsageErrors.h"

namespace balancenet::recompute {
namespace {

models::BlockInfo block(int64_t outputElements, int64_t memoryBytes) {
  models::BlockInfo b;
  b.outputElementsPerSample = outputElements;
  b.memoryPerSampleBytes = memoryBytes;
  return b;
}

TEST(RecomputeMemory, ThePeakIsTheLargestBlockRebuiltBesideTheOutputsBeforeIt) {
  // Outputs 4 B x {100, 10, 1000}; the blocks cost 1000, 5000, 800 whole. Block 1's backward: 400 kept + 5000.
  const std::vector<models::BlockInfo> blocks{block(100, 1000), block(10, 5000), block(1000, 800)};
  EXPECT_EQ(recomputedBytesPerSample(blocks), 400 + 5000);
  // A last block whose output is the largest thing: the forward's end is the peak (every output kept).
  const std::vector<models::BlockInfo> wide{block(10, 100), block(5000, 100)};
  EXPECT_EQ(recomputedBytesPerSample(wide), 4 * (10 + 5000));
  // Always below keeping everything where the blocks keep more than their outputs.
  EXPECT_LT(recomputedBytesPerSample(blocks), 1000 + 5000 + 800);
}

TEST(RecomputeMemory, UnderAccumulateAutoItRecomputesWhereThePassesSavedCostMoreThanTheSecondForward) {
  constexpr int64_t kAuto = 0;
  EXPECT_TRUE(recomputePays(64, 0, 4, kAuto));                     // without it not one sample fits
  EXPECT_FALSE(recomputePays(64, 0, 0, kAuto));                    // nor with it
  EXPECT_FALSE(recomputePays(64, memory::kUnlimited, 64, kAuto));  // no cap: nothing to save
  EXPECT_FALSE(recomputePays(64, 16, 64, kAuto));                  // 4 passes to 1: 1.5 samples' worth < 21.3
  EXPECT_FALSE(recomputePays(64, 16, 8, kAuto));                   // it would hold fewer
  // 64 one-sample passes to 1: 63 x 0.5 = 31.5 samples' worth > 64 / 3.
  EXPECT_TRUE(recomputePays(64, 1, 64, kAuto));
  EXPECT_FALSE(recomputePays(64, 2, 64, kAuto));  // 31 passes saved: 15.5 < 21.3
}

TEST(RecomputeMemory, UnderAFixedAccumulateItRecomputesWhereTheCapWithoutItBinds) {
  EXPECT_TRUE(recomputePays(64, 16, 64, 1));   // one pass holds 16 of 64 without, all with
  EXPECT_TRUE(recomputePays(64, 16, 20, 2));   // two passes hold 32 without: more with
  EXPECT_FALSE(recomputePays(64, 16, 64, 4));  // four passes hold the 64 already
  EXPECT_FALSE(recomputePays(64, 16, 16, 1));  // it would hold no more
  EXPECT_TRUE(recomputePays(64, 0, 1, 1));     // only with it does a sample fit
}

TEST(RecomputeMode, ParsesItsThreeWordsAndRefusesOthersInOneLine) {
  EXPECT_EQ(parseRecomputeMode("none"), RecomputeMode::None);
  EXPECT_EQ(parseRecomputeMode("blocks"), RecomputeMode::Blocks);
  EXPECT_EQ(parseRecomputeMode("auto"), RecomputeMode::Auto);
  for (auto mode : {RecomputeMode::None, RecomputeMode::Blocks, RecomputeMode::Auto})
    EXPECT_EQ(parseRecomputeMode(recomputeModeName(mode)), mode);
  balancenet::testing::expectOneLineUsageError([] { parseRecomputeMode("all"); },
                                               "--recompute must be none, blocks or auto");
}

}  // namespace
}  // namespace balancenet::recompute

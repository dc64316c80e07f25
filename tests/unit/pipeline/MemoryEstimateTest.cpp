// MemoryEstimate: state and activation bytes of a stage on a hand-made block list, and the refusal's line.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/MemoryEstimate.h"
#include "testing/UsageErrors.h"

namespace balancenet::pipeline {
namespace {

using testing::usageErrorOf;
constexpr int64_t kMiB = 1 << 20;

// Ten blocks; blocks 5-9 hold 5 Mi parameters (80 MiB of adam state) and cost 16.625 MiB per sample, so that
// micro-batches of 8 with 4 in flight need 532 MiB of activations. Blocks 0-4 are small and odd, to show
// that only the range counts.
std::vector<models::BlockInfo> tenBlocks() {
  std::vector<models::BlockInfo> blocks(10);
  for (size_t b = 0; b < 5; ++b) {
    blocks[b].parameters = 7;
    blocks[b].memoryPerSampleBytes = 3;
  }
  for (size_t b = 5; b < 10; ++b) {
    blocks[b].parameters = kMiB;
    blocks[b].memoryPerSampleBytes = b < 9 ? 4 * kMiB : 5 * kMiB / 8;
  }
  return blocks;
}

TEST(MemoryEstimate, StateBytesPerParameterFollowsTheOptimizer) {
  EXPECT_EQ(stateBytesPerParameter("sgd"), 12);   // parameter, gradient, momentum
  EXPECT_EQ(stateBytesPerParameter("adam"), 16);  // parameter, gradient, two moments
  EXPECT_EQ(stateBytesPerParameter("adamw"), 16);
  EXPECT_THROW(stateBytesPerParameter("rmsprop"), InternalError);
}

TEST(MemoryEstimate, AddsTheRangesStateAndItsActivationsInFlight) {
  const auto blocks = tenBlocks();
  const auto stage = estimateStageMemory(blocks, {5, 10}, 8, 4, "adam");
  EXPECT_EQ(stage.stateBytes, 80 * kMiB);
  EXPECT_EQ(stage.activationBytes, 532 * kMiB);
  EXPECT_EQ(stage.total(), 612 * kMiB);
  // The first blocks alone, sgd, one micro-batch of 2 in flight: 5 x 7 x 12 and 5 x 3 x 2.
  const auto first = estimateStageMemory(blocks, {0, 5}, 2, 1, "sgd");
  EXPECT_EQ(first.stateBytes, 420);
  EXPECT_EQ(first.activationBytes, 30);
  // Data parallelism: the whole model, the whole share of 8, one in flight.
  const auto whole = estimateStageMemory(blocks, {0, 10}, 8, 1, "adam");
  EXPECT_EQ(whole.stateBytes, 80 * kMiB + 35 * 16);
  EXPECT_EQ(whole.activationBytes, 133 * kMiB + 15 * 8);
}

TEST(MemoryEstimate, RefusesImpossibleArgumentsAsABug) {
  const auto blocks = tenBlocks();
  EXPECT_THROW(estimateStageMemory(blocks, {5, 11}, 8, 4, "adam"), InternalError);
  EXPECT_THROW(estimateStageMemory(blocks, {5, 5}, 8, 4, "adam"), InternalError);
  EXPECT_THROW(estimateStageMemory(blocks, {0, 10}, 0, 4, "adam"), InternalError);
  EXPECT_THROW(estimateStageMemory(blocks, {0, 10}, 8, 0, "adam"), InternalError);
}

TEST(MemoryEstimate, RequireFitsNamesTheNodeTheEstimateTheLimitAndTheHint) {
  const auto need = estimateStageMemory(tenBlocks(), {5, 10}, 8, 4, "adam");
  EXPECT_EQ(usageErrorOf([&] { requireFits(need, 500, 2, "stage 1, blocks 5-9", "try --pipeline-stages 4"); }),
            "node 2 (stage 1, blocks 5-9) needs an estimated 612 MiB (state 80 MiB + activations 532 MiB), above "
            "--memory-limit-mb 500; try --pipeline-stages 4");
  EXPECT_EQ(usageErrorOf([&] { requireFits(need, 100.5, 0, "the whole model", ""); }),
            "node 0 (the whole model) needs an estimated 612 MiB (state 80 MiB + activations 532 MiB), above "
            "--memory-limit-mb 100.5");
  EXPECT_NO_THROW(requireFits(need, 612, 2, "stage 1, blocks 5-9", ""));  // exactly at the limit fits
  EXPECT_NO_THROW(requireFits(need, 0, 2, "stage 1, blocks 5-9", ""));    // 0: no limit
  EXPECT_THROW(requireFits(need, -1, 2, "stage 1, blocks 5-9", ""), InternalError);
}

TEST(MemoryEstimate, ANeedJustAboveTheLimitDoesNotPrintAsEqualToIt) {
  const StageMemory need{80 * kMiB, 532 * kMiB + 3 * kMiB / 8};  // 612.375 MiB
  EXPECT_EQ(usageErrorOf([&] { requireFits(need, 612, 1, "stage 1, blocks 5-9", ""); }),
            "node 1 (stage 1, blocks 5-9) needs an estimated 612.4 MiB (state 80.0 MiB + activations 532.4 MiB), "
            "above --memory-limit-mb 612");
}

}  // namespace
}  // namespace balancenet::pipeline

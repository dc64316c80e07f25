// Unit tests of ShapeTracker: shape arithmetic, FLOP counting and residual branches.
#include <stdexcept>

#include <gtest/gtest.h>

#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {
namespace {

TEST(ShapeTracker, ConvWithoutPaddingShrinksAndCountsTwoFlopsPerMultiplyAdd) {
  ShapeTracker t(1, 28, 28);
  t.conv(32, 3);
  EXPECT_EQ(t.str(), "32x26x26");
  EXPECT_EQ(t.flops(), 2 * (1 * 3 * 3) * 32 * 26 * 26);
}

TEST(ShapeTracker, StridedPaddedConvAndPools) {
  ShapeTracker t(3, 28, 28);
  t.conv(8, 3, 2, 1);  // (28 + 2 - 3) / 2 + 1 = 14
  EXPECT_EQ(t.str(), "8x14x14");
  EXPECT_EQ(t.flops(), 2 * (3 * 9) * 8 * 14 * 14);
  t.pool(2, 2);
  EXPECT_EQ(t.str(), "8x7x7");
  t.pool(3, 2);  // (7 - 3) / 2 + 1 = 3
  EXPECT_EQ(t.str(), "8x3x3");
  EXPECT_EQ(t.flops(), 2 * (3 * 9) * 8 * 14 * 14) << "pooling adds no FLOPs";
}

TEST(ShapeTracker, PadGlobalPoolFlattenLinear) {
  ShapeTracker t(4, 28, 28);
  t.pad(2);
  EXPECT_EQ(t.str(), "4x32x32");
  EXPECT_EQ(t.features(), 4 * 32 * 32);
  t.globalPool();
  EXPECT_EQ(t.str(), "4x1x1");
  ShapeTracker flat(64, 12, 12);
  flat.flatten();
  EXPECT_TRUE(flat.flattened());
  EXPECT_EQ(flat.channels(), 9216);
  EXPECT_EQ(flat.str(), "9216");
  flat.linear(128);
  EXPECT_EQ(flat.channels(), 128);
  EXPECT_EQ(flat.flops(), 2 * 9216 * 128);
}

TEST(ShapeTracker, RejectsLayersThatDoNotFit) {
  ShapeTracker t(8, 2, 2);
  EXPECT_THROW(t.conv(8, 3), std::logic_error);
  EXPECT_THROW(t.pool(3, 2), std::logic_error);
  EXPECT_THROW(t.linear(10), std::logic_error) << "linear needs flatten first";
  EXPECT_THROW(t.conv(0, 1), std::logic_error);
  EXPECT_EQ(t.str(), "8x2x2") << "a rejected layer leaves the shape alone";
  t.flatten();
  EXPECT_THROW(t.conv(8, 1), std::logic_error);
  EXPECT_THROW(t.pool(1, 1), std::logic_error);
  EXPECT_THROW(t.flatten(), std::logic_error);
  EXPECT_THROW(ShapeTracker(0, 28, 28), std::logic_error);
}

TEST(ShapeTracker, ForkStartsAtZeroFlopsAndJoinAddsBothBranches) {
  ShapeTracker t(16, 8, 8);
  t.conv(16, 3, 1, 1);
  const int64_t before = t.flops();
  ShapeTracker main = t.fork();
  EXPECT_TRUE(main.sameShape(t));
  EXPECT_EQ(main.flops(), 0);
  main.conv(32, 3, 2, 1);
  main.conv(32, 3, 1, 1);
  ShapeTracker shortcut = t.fork();
  shortcut.conv(32, 1, 2);
  t.join(main, shortcut);
  EXPECT_EQ(t.str(), "32x4x4");
  const int64_t expected = 2 * (16 * 9) * 32 * 16 + 2 * (32 * 9) * 32 * 16 + 2 * 16 * 32 * 16;
  EXPECT_EQ(t.flops(), before + expected);
}

TEST(ShapeTracker, JoinRejectsBranchesOfDifferentShapes) {
  ShapeTracker t(16, 8, 8);
  ShapeTracker main = t.fork();
  main.conv(32, 3, 2, 1);
  ShapeTracker identity = t.fork();
  EXPECT_THROW(t.join(main, identity), std::logic_error);
  ShapeTracker wrongStride = t.fork();
  wrongStride.conv(32, 1);  // right channels, but 8x8 instead of 4x4
  EXPECT_THROW(t.join(main, wrongStride), std::logic_error);
}

}  // namespace
}  // namespace balancenet::models

// MicroBatches: a share cut into at most M non-empty, near-equal micro-batches, and their offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/MicroBatches.h"

namespace balancenet::pipeline {
namespace {

using V = std::vector<int64_t>;

TEST(MicroBatches, CutsEquallyWithTheRemainderFirst) {
  EXPECT_EQ(microBatchSizes(10, 4), (V{3, 3, 2, 2}));
  EXPECT_EQ(microBatchSizes(8, 8), (V{1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(microBatchSizes(64, 1), (V{64}));
  EXPECT_EQ(microBatchSizes(3, 8), (V{1, 1, 1}));  // never an empty micro-batch
}

TEST(MicroBatches, SumToTheShareDifferByAtMostOneAndNumberMinOfMAndShare) {
  for (int64_t share = 1; share <= 40; ++share)
    for (int micros = 1; micros <= 12; ++micros) {
      const auto sizes = microBatchSizes(share, micros);
      SCOPED_TRACE("share " + std::to_string(share) + " micros " + std::to_string(micros));
      EXPECT_EQ(static_cast<int64_t>(sizes.size()), std::min<int64_t>(micros, share));
      EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), int64_t{0}), share);
      const auto [smallest, largest] = std::minmax_element(sizes.begin(), sizes.end());
      EXPECT_GE(*smallest, 1);
      EXPECT_LE(*largest - *smallest, 1);
      EXPECT_TRUE(std::is_sorted(sizes.rbegin(), sizes.rend()));  // the larger first
    }
}

TEST(MicroBatches, OffsetsArePrefixSumsFromZero) {
  EXPECT_EQ(microBatchOffsets({3, 3, 2, 2}), (V{0, 3, 6, 8}));
  EXPECT_EQ(microBatchOffsets({5}), (V{0}));
  EXPECT_EQ(microBatchOffsets({}), V{});
}

TEST(MicroBatches, RefusesAnEmptyShareOrNoMicroBatchesAsABug) {
  EXPECT_THROW(microBatchSizes(0, 4), InternalError);
  EXPECT_THROW(microBatchSizes(8, 0), InternalError);
}

}  // namespace
}  // namespace balancenet::pipeline

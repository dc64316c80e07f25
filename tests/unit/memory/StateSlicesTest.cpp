// StateSlices: slices by memory, summing to the parameters, unknown rooms, every worker at least one element.
#include <gtest/gtest.h>

#include <numeric>

#include "balancenet/core/Error.h"
#include "balancenet/memory/StateSlices.h"

namespace balancenet::memory {
namespace {

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

TEST(StateSlices, SlicesFollowEachWorkersRoom) {
  EXPECT_EQ(stateSlices(1000, {300, 100, 100, 500}), (std::vector<int64_t>{300, 100, 100, 500}));
  const auto uneven = stateSlices(10, {1, 1, 1});  // 9 / 3 plus one element by largest remainder, to rank 0
  EXPECT_EQ(uneven, (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(stateSlices(12, {0, 0, 0}), (std::vector<int64_t>{4, 4, 4}));  // nothing known: equal
  // An unknown room counts as the largest given: the capped worker is the one that holds less.
  EXPECT_EQ(stateSlices(700, {0, 0, 100, 200}), (std::vector<int64_t>{200, 200, 100, 200}));
  EXPECT_EQ(sliceOffsets({3, 0, 5}), (std::vector<int64_t>{0, 3, 3}));
}

TEST(StateSlices, EveryElementIsOwnedOnceAndEveryWorkerHoldsOne) {
  for (int64_t elements : {4, 5, 7, 1000, 1199882})
    for (const std::vector<double>& rooms : std::vector<std::vector<double>>{{1, 1e9, 1, 1}, {5, 3}, {0, 7, 0, 1}}) {
      const auto sizes = stateSlices(elements, rooms);
      EXPECT_EQ(sum(sizes), elements);
      for (int64_t s : sizes) EXPECT_GE(s, 1) << elements;
    }
  EXPECT_EQ(sum(stateSlices(2, {1, 1, 1})), 2);  // fewer elements than workers: some own none
}

TEST(StateSlices, PiecesCoverAFlatRangeAcrossTensors) {
  const std::vector<int64_t> numels{4, 0, 3, 5};  // flat: [0,4) [4,4) [4,7) [7,12)
  const auto pieces = piecesOf(numels, 2, 7);     // [2, 9)
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].tensor, 0u);
  EXPECT_EQ(pieces[0].offset, 2);
  EXPECT_EQ(pieces[0].length, 2);
  EXPECT_EQ(pieces[0].flatOffset, 0);
  EXPECT_EQ(pieces[1].tensor, 2u);
  EXPECT_EQ(pieces[1].length, 3);
  EXPECT_EQ(pieces[1].flatOffset, 2);
  EXPECT_EQ(pieces[2].tensor, 3u);
  EXPECT_EQ(pieces[2].offset, 0);
  EXPECT_EQ(pieces[2].length, 2);
  EXPECT_EQ(pieces[2].flatOffset, 5);
  EXPECT_TRUE(piecesOf(numels, 12, 0).empty());
  EXPECT_THROW(piecesOf(numels, 10, 3), InternalError);
  // The slices of every worker together cover every element once.
  const auto sizes = stateSlices(12, {1, 3, 2});
  const auto offsets = sliceOffsets(sizes);
  std::vector<int> covered(12, 0);
  for (size_t r = 0; r < sizes.size(); ++r)
    for (const auto& p : piecesOf(numels, offsets[r], sizes[r])) {
      int64_t start = 0;
      for (size_t t = 0; t < p.tensor; ++t) start += numels[t];
      for (int64_t i = 0; i < p.length; ++i) ++covered[start + p.offset + i];
    }
  EXPECT_EQ(covered, std::vector<int>(12, 1));
}

}  // namespace
}  // namespace balancenet::memory

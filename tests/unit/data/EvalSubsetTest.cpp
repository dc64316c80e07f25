// --eval-samples: the test set's fixed, seeded subset, and the test set the trainer evaluates.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "balancenet/data/Dataset.h"
#include "testing/SyntheticData.h"

namespace balancenet::data {
namespace {

TEST(EvalSubset, IsOfTheRequestedSizeWithoutDuplicatesAndInRange) {
  for (const int64_t count : {1, 7, 500, 9999}) {
    const auto indices = seededSampleIndices(10000, count, 1);
    ASSERT_EQ(static_cast<int64_t>(indices.size()), count);
    EXPECT_EQ(std::set<int64_t>(indices.begin(), indices.end()).size(), indices.size()) << count;
    EXPECT_TRUE(std::is_sorted(indices.begin(), indices.end()));  // read in order, as the whole set is
    EXPECT_GE(indices.front(), 0);
    EXPECT_LT(indices.back(), 10000);
  }
}

TEST(EvalSubset, IsTheSameForASeedAndAnotherForAnotherSeed) {
  EXPECT_EQ(seededSampleIndices(10000, 100, 1), seededSampleIndices(10000, 100, 1));
  EXPECT_NE(seededSampleIndices(10000, 100, 1), seededSampleIndices(10000, 100, 2));
  // Not the first N: the subset is spread over the set (whose order may follow the classes).
  const auto spread = seededSampleIndices(10000, 100, 1);
  EXPECT_GT(spread.back(), 5000);
  EXPECT_LT(spread.front(), 5000);
}

TEST(EvalSubset, ACountOfTheWholeSetOrMoreIsTheWholeSet) {
  EXPECT_EQ(seededSampleIndices(5, 5, 3), indexRange(0, 5));
  EXPECT_EQ(seededSampleIndices(5, 50, 3), indexRange(0, 5));
}

TEST(EvalSubset, TheTestSetEvaluatedIsTheSubsetTheWholeSetOrNone) {
  const std::shared_ptr<const Dataset> test =
      std::make_shared<balancenet::testing::ImageSet>(balancenet::testing::syntheticDataset(40, 3));
  const auto subset = evaluationSet(test, 8, 1);
  ASSERT_NE(subset, nullptr);
  EXPECT_EQ(subset->size(), 8);
  const auto picked = seededSampleIndices(40, 8, 1);
  EXPECT_TRUE(subset->batch({0, 7}).inputs.equal(test->batch({picked[0], picked[7]}).inputs));
  EXPECT_EQ(evaluationSet(test, kAllSamples, 1), test);
  EXPECT_EQ(evaluationSet(test, 40, 1), test);
  EXPECT_EQ(evaluationSet(test, 0, 1), nullptr);
  EXPECT_EQ(evaluationSet(nullptr, 8, 1), nullptr);  // no held-out set (--val-fraction 0)
}

}  // namespace
}  // namespace balancenet::data

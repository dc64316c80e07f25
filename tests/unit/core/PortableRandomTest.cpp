// PortableRandom's uniform and normal draws: the same numbers on every platform, with the right moments.
#include "balancenet/core/PortableRandom.h"

#include <gtest/gtest.h>

namespace balancenet {
namespace {

// mt19937_64's output is fixed by the standard: 42's first draw is 13930160852258120406, whose top 53 bits
// over 2^53 are 0.755155532954539 (as Python computes it); so are the draws built on it.
TEST(PortableRandom, DrawsAreFixedByTheSeed) {
  std::mt19937_64 gen(42);
  EXPECT_DOUBLE_EQ(uniform01(gen), 0.755155532954539);
  EXPECT_NEAR(standardNormal(gen), 0.019241066361427629, 1e-12);
}

TEST(PortableRandom, UniformIsInTheUnitIntervalAndNormalIsStandard) {
  std::mt19937_64 gen(7);
  constexpr int kDraws = 20000;
  double sum = 0, sumSquares = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = uniform01(gen);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const double x = standardNormal(gen);
    sum += x;
    sumSquares += x * x;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.03);         // 4 standard errors
  EXPECT_NEAR(sumSquares / kDraws, 1.0, 0.05);  // about 4 standard errors
}

}  // namespace
}  // namespace balancenet

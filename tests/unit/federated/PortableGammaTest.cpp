#include "balancenet/federated/PortableGamma.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "balancenet/core/PortableRandom.h"

namespace balancenet::federated {
namespace {

double meanOfGammaDraws(double alpha, int n) {
  auto gen = seededGenerator(7, 1);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(logGammaDraw(gen, alpha));
  return sum / n;
}

// Gamma(alpha, 1) has mean alpha: checks both branches (the alpha < 1 boost and Marsaglia-Tsang itself).
TEST(PortableGammaTest, MeanIsAlpha) {
  for (double alpha : {0.1, 0.5, 1.0, 2.5, 20.0})
    EXPECT_NEAR(meanOfGammaDraws(alpha, 40000), alpha, 0.03 * alpha + 0.005) << alpha;
}

TEST(PortableGammaTest, SameGeneratorStateSameDraws) {
  auto a = seededGenerator(3, 9);
  auto b = seededGenerator(3, 9);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(logGammaDraw(a, 0.3), logGammaDraw(b, 0.3));
}

TEST(PortableGammaTest, DirichletIsAProbabilityVectorEvenWhenEveryGammaUnderflows) {
  auto gen = seededGenerator(1, 2);
  for (double alpha : {0.001, 0.1, 1.0, 1000.0}) {
    const auto q = dirichletDraw(gen, alpha, 8);
    ASSERT_EQ(q.size(), 8u);
    for (double v : q) EXPECT_TRUE(v >= 0 && v <= 1) << v;
    EXPECT_NEAR(std::accumulate(q.begin(), q.end(), 0.0), 1.0, 1e-12) << alpha;
  }
}

}  // namespace
}  // namespace balancenet::federated

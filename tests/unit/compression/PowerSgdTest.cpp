// PowerSGD's arithmetic: which matrices it factors, orthonormal columns without NaN, one start for every process,
// and a rank-r matrix recovered exactly by a rank-r step.
#include "balancenet/compression/PowerSgd.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

namespace balancenet::compression {
namespace {

TEST(PowerSgd, FactorsOnlyMatricesItMakesSmaller) {
  EXPECT_TRUE(compressesMatrix(64, 32, 1));
  EXPECT_TRUE(compressesMatrix(64, 32, 4));
  EXPECT_FALSE(compressesMatrix(64, 32, 32));  // rank at a side: nothing to gain
  EXPECT_FALSE(compressesMatrix(10, 12, 6));   // (10 + 12) 6 = 132 > 120 numbers
  EXPECT_TRUE(compressesMatrix(10, 12, 5));    // 110 < 120
  EXPECT_FALSE(compressesMatrix(1, 100, 1));   // a row: rank 1 is its whole rank
  using Shape = std::pair<int64_t, int64_t>;
  EXPECT_EQ(matrixShape({16, 3, 5, 5}), Shape(16, 75));  // a conv kernel: out x the rest
  EXPECT_EQ(matrixShape({7}), Shape(7, 1));
}

TEST(PowerSgd, OrthonormalizedColumnsAreOrthonormalAndAZeroColumnStaysZero) {
  at::manual_seed(1);
  // Nearly parallel columns, as M Q gives after a few warm-started steps.
  auto p = at::randn({50, 1}).repeat({1, 3}) + at::randn({50, 3}) * 1e-3;
  orthonormalizeColumns(p);
  EXPECT_LT((at::mm(p.t(), p) - at::eye(3)).abs().max().item<double>(), 1e-5);
  auto zeros = at::zeros({20, 2});
  orthonormalizeColumns(zeros);
  EXPECT_TRUE(at::equal(zeros, at::zeros({20, 2})));  // a zero gradient sends zeros, not NaN
}

TEST(PowerSgd, TheStartDependsOnTheSeedAlone) {
  const auto a = initialQ(30, 2, 7, at::TensorOptions());
  at::manual_seed(123);  // the global generator plays no part
  EXPECT_TRUE(at::equal(a, initialQ(30, 2, 7, at::TensorOptions())));
  EXPECT_FALSE(at::equal(a, initialQ(30, 2, 8, at::TensorOptions())));
  EXPECT_EQ(a.sizes(), (at::IntArrayRef{30, 2}));
}

// A matrix of rank r is in the span of M Q for almost every Q: the rank-r step returns it, up to float32's rounding.
TEST(PowerSgd, ALowRankMatrixIsRecoveredExactlyByAStepOfItsRank) {
  at::manual_seed(2);
  for (int r : {1, 2, 4}) {
    SCOPED_TRACE(r);
    const auto m = at::mm(at::randn({40, r}), at::randn({r, 30}));
    auto q = initialQ(30, r, 11, at::TensorOptions());
    const auto approx = lowRankApproximation(m, q);
    EXPECT_LT((approx - m).abs().max().item<double>(), 1e-5 * m.abs().max().item<double>());
    EXPECT_EQ(q.sizes(), (at::IntArrayRef{30, r}));
  }
  // A rank-2 matrix through rank 1 is not: what is lost is the second direction (error feedback keeps it).
  const auto m = at::mm(at::randn({40, 2}), at::randn({2, 30}));
  auto q = initialQ(30, 1, 11, at::TensorOptions());
  EXPECT_GT((lowRankApproximation(m, q) - m).abs().max().item<double>(), 1e-2 * m.abs().max().item<double>());
}

// Warm-started steps are power iteration: on a fixed matrix the rank-1 step converges to its best rank-1 part.
TEST(PowerSgd, RepeatedStepsConvergeToTheLeadingSingularDirection) {
  at::manual_seed(5);
  const auto u = at::randn({30, 3}), v = at::randn({3, 20});
  const auto m = at::mm(u * at::tensor({10.0f, 3.0f, 1.0f}), v);
  auto q = initialQ(20, 1, 3, at::TensorOptions());
  at::Tensor approx;
  for (int step = 0; step < 30; ++step) approx = lowRankApproximation(m, q);
  const auto svd = at::linalg_svd(m, /*full_matrices=*/false);
  const auto& s = std::get<1>(svd);
  const auto best = std::get<0>(svd).narrow(1, 0, 1) * s[0] * std::get<2>(svd).narrow(0, 0, 1);
  EXPECT_LT((approx - best).abs().max().item<double>(), 1e-3 * m.abs().max().item<double>());
}

}  // namespace
}  // namespace balancenet::compression

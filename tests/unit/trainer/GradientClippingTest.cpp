// GradientClipping and MicroSteps: the pure pieces of --clip-grad-norm and --accumulate.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>

#include "balancenet/trainer/GradientClipping.h"
#include "balancenet/trainer/MicroSteps.h"

namespace balancenet::trainer {
namespace {

TEST(GradientClipping, ScalesLikeLibtorchsClipGradNorm) {
  at::manual_seed(3);
  std::vector<at::Tensor> params{at::randn({4, 5}).requires_grad_(), at::randn({7}).requires_grad_()};
  for (auto& p : params) p.mutable_grad() = at::randn(p.sizes());
  std::vector<at::Tensor> ours;
  for (auto& p : params) ours.push_back(p.grad().clone());
  const double expectedNorm = torch::nn::utils::clip_grad_norm_(params, 0.5);
  const double norm = clipGradients(ours, 0.5);
  EXPECT_NEAR(norm, expectedNorm, 1e-5);
  for (size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(at::allclose(ours[i], params[i].grad(), 1e-6, 1e-7)) << i;
}

TEST(GradientClipping, LeavesSmallGradientsAndUsesAGivenTotal) {
  std::vector<at::Tensor> g{at::full({3}, 0.1)};
  EXPECT_NEAR(clipGradients(g, 10.0), std::sqrt(0.03), 1e-7);
  EXPECT_TRUE(at::equal(g[0], at::full({3}, 0.1)));
  EXPECT_DOUBLE_EQ(clipFactor(1.0, 2.0), 1.0);
  // A stage passes the squared norm over all stages: its part is scaled by the global factor.
  clipGradients(g, 1.0, /*squaredTotal=*/16.0);
  EXPECT_NEAR(g[0][0].item<double>(), 0.1 * 1.0 / (4.0 + 1e-6), 1e-7);
}

TEST(MicroSteps, CutsASharePiecesDifferingByAtMostOne) {
  const auto m = microSteps(11, 3);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].begin, 0);
  int64_t total = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    if (i > 0) EXPECT_EQ(m[i].begin, m[i - 1].begin + m[i - 1].size);
    EXPECT_TRUE(m[i].size == 3 || m[i].size == 4);
    total += m[i].size;
  }
  EXPECT_EQ(total, 11);
  EXPECT_EQ(microSteps(2, 5).size(), 2u);  // never an empty piece where rows exist
  const auto empty = microSteps(0, 4);     // an empty share still takes its step
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].size, 0);
}

}  // namespace
}  // namespace balancenet::trainer

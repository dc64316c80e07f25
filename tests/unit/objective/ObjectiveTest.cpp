// Objective: the per-sample loss sums every way of training divides by the global batch, checked against
// libtorch's own mean losses, and the loss/target combinations that are refused.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/core/Error.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::objective {
namespace {

data::DatasetSpec classes(int64_t k) {
  data::DatasetSpec s;
  s.inputShape = {1, 4, 4};
  s.classes = k;
  return s;
}

data::DatasetSpec tokens(int64_t t, int64_t vocab, bool text = false) {
  data::DatasetSpec s;
  s.inputShape = {t};
  s.tokenInput = true;
  s.target = data::TargetKind::Tokens;
  s.classes = vocab;
  s.targetShape = {t};
  s.bytesAsTokens = text;
  return s;
}

data::DatasetSpec regression(std::vector<int64_t> shape) {
  data::DatasetSpec s;
  s.inputShape = {3};
  s.target = data::TargetKind::Regression;
  s.targetShape = std::move(shape);
  return s;
}

TEST(Objective, ClassLossSumIsTheBatchMeanTimesItsSize) {
  at::manual_seed(1);
  const auto out = at::randn({6, 5});
  const auto y = at::randint(0, 5, {6}, at::kLong);
  const Objective o(classes(5), {});
  EXPECT_NEAR(o.lossSum(out, y).item<double>() / 6, at::cross_entropy_loss(out, y).item<double>(), 1e-6);
  const Objective smoothed(classes(5), {LossKind::Auto, 0.1});
  EXPECT_NEAR(smoothed.trainingLossSum(out, y).item<double>() / 6,
              at::cross_entropy_loss(out, y, {}, at::Reduction::Mean, -100, 0.1).item<double>(), 1e-6);
  // Evaluation reports the plain loss, whatever the smoothing.
  EXPECT_NEAR(smoothed.lossSum(out, y).item<double>(), o.lossSum(out, y).item<double>(), 1e-9);
  EXPECT_DOUBLE_EQ(o.correctSum(out, y), out.argmax(1).eq(y).sum().item<double>());
  EXPECT_EQ(o.metricStyle().rateUnit, std::string("samples"));
}

TEST(Objective, TokenSampleLossIsTheMeanOverItsTokens) {
  at::manual_seed(2);
  const auto out = at::randn({3, 4, 7});  // 3 windows of 4 tokens, vocabulary 7
  const auto y = at::randint(0, 7, {3, 4}, at::kLong);
  const Objective o(tokens(4, 7, /*text=*/true), {});
  // Sum over windows / windows = nanoGPT's mean over every token.
  EXPECT_NEAR(o.lossSum(out, y).item<double>() / 3,
              at::cross_entropy_loss(out.reshape({-1, 7}), y.reshape({-1})).item<double>(), 1e-6);
  const double hits = out.argmax(-1).eq(y).sum().item<double>();
  EXPECT_NEAR(o.correctSum(out, y), hits / 4, 1e-12);  // each window counts the share of its tokens right
  const auto style = o.metricStyle();
  EXPECT_EQ(style.rateUnit, std::string("tokens"));
  EXPECT_EQ(style.unitsPerSample, 4);
  EXPECT_TRUE(style.perplexity && style.bitsPerByte);
}

TEST(Objective, MseIsTheMeanOverEachSamplesOutputs) {
  at::manual_seed(3);
  const auto out = at::randn({5, 2});
  const auto y = at::randn({5, 2});
  const Objective o(regression({2}), {});
  EXPECT_EQ(o.kind(), LossKind::Mse);
  EXPECT_NEAR(o.lossSum(out, y).item<double>() / 5, at::mse_loss(out, y).item<double>(), 1e-6);
  EXPECT_FALSE(o.metricStyle().accuracy);
  EXPECT_DOUBLE_EQ(o.correctSum(out, y), 0.0);
}

TEST(Objective, RefusesLossesThatDoNotFitTheTargets) {
  EXPECT_THROW(Objective(classes(10), {LossKind::Mse, 0}), UsageError);
  EXPECT_THROW(Objective(regression({1}), {LossKind::CrossEntropy, 0}), UsageError);
  EXPECT_THROW(Objective(regression({1}), {LossKind::Auto, 0.1}), UsageError);
  EXPECT_THROW(Objective(classes(10), {LossKind::Auto, 1.0}), UsageError);
  EXPECT_THROW(parseLossKind("hinge"), UsageError);
  EXPECT_EQ(parseLossKind("mse"), LossKind::Mse);
}

}  // namespace
}  // namespace balancenet::objective

// A parameter's optimiser state, moved to a fresh optimiser over a copy of the parameter, lets training go on
// exactly as if nothing had moved: what a pipeline re-partition relies on.
#include "balancenet/trainer/OptimizerState.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/optim/rmsprop.h>

#include "balancenet/core/Error.h"
#include "balancenet/trainer/OptimizerFactory.h"

namespace balancenet::trainer {
namespace {

std::vector<at::Tensor> freshParameters() {
  at::manual_seed(11);
  return {at::randn({5, 3}).requires_grad_(), at::randn({3}).requires_grad_()};
}

std::vector<at::Tensor> copiesOf(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

// One step of a small regression whose data depend on `step`, so successive steps see different gradients.
void trainStep(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& params, int64_t step) {
  at::manual_seed(100 + step);
  const auto x = at::randn({8, 5});
  const auto y = at::randn({8, 3});
  optimizer.zero_grad();
  (at::matmul(x, params[0]) + params[1] - y).pow(2).mean().backward();
  optimizer.step();
}

double maxDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

OptimizerOptions named(const std::string& name) {
  OptimizerOptions o;
  o.name = name;
  o.weightDecay = 1e-3;
  return o;
}

class OptimizerStateTest : public ::testing::TestWithParam<std::string> {};

// Three steps in one optimiser, then every parameter's state moves to a fresh optimiser over copies of the
// parameters; both go on for three more steps and must agree bit for bit. A fresh optimiser that does not
// get the state drifts away, so the comparison can fail.
TEST_P(OptimizerStateTest, MovingEveryParametersStateContinuesExactly) {
  const auto options = named(GetParam());
  auto original = freshParameters();
  auto first = makeOptimizer(options, original, 0.05);
  for (int64_t s = 0; s < 3; ++s) trainStep(*first, original, s);

  auto moved = copiesOf(original);
  auto second = makeOptimizer(options, moved, 0.05);
  for (size_t i = 0; i < original.size(); ++i) {
    const auto state = parameterState(*first, original[i]);
    EXPECT_EQ(state.size(), GetParam() == "sgd" ? 1u : 3u);
    setParameterState(*second, moved[i], state);
  }
  auto forgetful = copiesOf(original);
  auto stateless = makeOptimizer(options, forgetful, 0.05);

  for (int64_t s = 3; s < 6; ++s) {
    trainStep(*first, original, s);
    trainStep(*second, moved, s);
    trainStep(*stateless, forgetful, s);
  }
  EXPECT_EQ(maxDifference(original, moved), 0.0);
  EXPECT_GT(maxDifference(original, forgetful), 1e-4);
}

// The state is a copy: further steps of the optimiser it came from do not change it.
TEST_P(OptimizerStateTest, StateIsACopyNotAView) {
  auto params = freshParameters();
  auto optimizer = makeOptimizer(named(GetParam()), params, 0.05);
  trainStep(*optimizer, params, 0);
  const auto before = parameterState(*optimizer, params[0]);
  const auto kept = before.back().clone();
  trainStep(*optimizer, params, 1);
  EXPECT_TRUE(before.back().equal(kept));
}

// Before its first step an optimiser keeps no state: the state is empty, and installing an empty state
// leaves a fresh optimiser fresh (it trains as one that was never touched).
TEST_P(OptimizerStateTest, EmptyStateBeforeTheFirstStep) {
  const auto options = named(GetParam());
  auto params = freshParameters();
  auto optimizer = makeOptimizer(options, params, 0.05);
  for (const auto& p : params) EXPECT_TRUE(parameterState(*optimizer, p).empty());

  auto copies = copiesOf(params);
  auto other = makeOptimizer(options, copies, 0.05);
  for (const auto& p : copies) setParameterState(*other, p, {});
  EXPECT_TRUE(other->state().empty());
  for (int64_t s = 0; s < 3; ++s) {
    trainStep(*optimizer, params, s);
    trainStep(*other, copies, s);
  }
  EXPECT_EQ(maxDifference(params, copies), 0.0);
  // Installing an empty state over a real one removes it.
  setParameterState(*other, copies[0], {});
  EXPECT_TRUE(parameterState(*other, copies[0]).empty());
  EXPECT_FALSE(parameterState(*other, copies[1]).empty());
}

INSTANTIATE_TEST_SUITE_P(SgdAndAdam, OptimizerStateTest, ::testing::Values("sgd", "adam", "adamw"),
                         [](const auto& info) { return info.param; });

TEST(OptimizerState, RefusesAParameterTheOptimizerDoesNotHoldAndAnUnknownOptimizer) {
  auto params = freshParameters();
  auto optimizer = makeOptimizer(named("sgd"), params, 0.05);
  EXPECT_THROW(setParameterState(*optimizer, at::zeros({3}), {}), InternalError);
  torch::optim::RMSprop rmsprop(params, torch::optim::RMSpropOptions(0.01));
  EXPECT_THROW(parameterState(rmsprop, params[0]), InternalError);
}

}  // namespace
}  // namespace balancenet::trainer

// RecomputedForward against the network's own forward, in one process: the same loss, the same gradient of every
// parameter and the same buffers after the step, for a plain cnn, a network with BatchNorm (its running statistics
// must move once, not twice) and a gpt with dropout (the second forward must draw the first one's masks).
#include "balancenet/recompute/RecomputedForward.h"

#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "../models/GptTesting.h"
#include "balancenet/models/ModelZoo.h"
#include "testing/FloatBound.h"
#include "testing/UsageErrors.h"

namespace balancenet::recompute {
namespace {

struct Pass {
  at::Tensor loss;
  std::vector<at::Tensor> grads, buffers;
};

struct Case {
  std::string name;
  models::ModelOptions options;
  at::Tensor inputs, targets;
};

Case imageCase(const std::string& name) {
  Case c{name, {}, {}, {}};
  c.options.name = name;
  c.options.width = 0.25;
  c.options.dropout = name == "alexnet" ? 0.3 : 0;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
  c.inputs = at::randn({6, 1, 28, 28}, generator);
  c.targets = at::randint(10, {6}, generator, at::kLong);
  return c;
}

Case gptCase() {
  Case c{"gpt", models::gpttest::smallGpt(/*dropout=*/0.2), models::gpttest::tokens(4, models::gpttest::kContext, 3),
         models::gpttest::tokens(4, models::gpttest::kContext, 4)};
  return c;
}

at::Tensor lossOf(const Case& c, const at::Tensor& outputs) {
  if (c.options.tokenInput) return models::gpttest::tokenLoss(outputs, c.targets);
  return at::cross_entropy_loss(outputs, c.targets);
}

// One forward and backward from the same weights, buffers and random state.
Pass step(models::Network& net, const Case& c, const std::vector<at::Tensor>& startBuffers, RecomputedForward* rc) {
  {
    at::NoGradGuard noGrad;
    size_t i = 0;
    for (auto& b : net.buffers()) b.copy_(startBuffers[i++]);
  }
  net.zero_grad();
  at::manual_seed(11);
  Pass p;
  p.loss = lossOf(c, rc ? rc->forward(c.inputs) : net.forward(c.inputs));
  p.loss.backward();
  for (const auto& t : net.parameters()) p.grads.push_back(t.grad().clone());
  for (const auto& b : net.buffers()) p.buffers.push_back(b.clone());
  return p;
}

double largestDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

class EveryKindOfBlock : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryKindOfBlock, GivesTheGradientAndBuffersOfThePlainForward) {
  const Case c = GetParam() == "gpt" ? gptCase() : imageCase(GetParam());
  auto model = models::buildModel(c.options);
  model.net->train();
  std::vector<at::Tensor> start;
  for (const auto& b : model.net->buffers()) start.push_back(b.clone());
  const Pass plain = step(*model.net, c, start, nullptr);
  RecomputedForward recomputed(*model.net, precision::Precision::Fp32, c10::kCPU);
  const Pass again = step(*model.net, c, start, &recomputed);
  // The same operations on the same values: a bound for reordered sums, which it should not even need.
  EXPECT_LE((plain.loss - again.loss).abs().item<double>(), testing::exactnessBound({plain.loss}, 1));
  ASSERT_EQ(plain.grads.size(), again.grads.size());
  EXPECT_LE(largestDifference(plain.grads, again.grads), testing::exactnessBound(plain.grads, 1));
  ASSERT_EQ(plain.buffers.size(), again.buffers.size());
  EXPECT_LE(largestDifference(plain.buffers, again.buffers), testing::exactnessBound(plain.buffers, 1));
  if (GetParam() == "resnet18") {  // the running statistics moved (once), so the check above had something to see
    ASSERT_FALSE(start.empty());
    EXPECT_GT(largestDifference(start, again.buffers), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EveryKindOfBlock, ::testing::Values("cnn", "resnet18", "alexnet", "gpt"));

// A network that is one block: rebuilding it whole keeps what keeping it does, so it is refused in one line.
struct OneBlock : models::Network {
  at::Tensor forward(const at::Tensor& x) override { return x * 2; }
};

TEST(RecomputedForward, RefusesANetworkOfOneBlock) {
  OneBlock net;
  testing::expectOneLineUsageError([&] { RecomputedForward(net, precision::Precision::Fp32, c10::kCPU); },
                                   "--recompute blocks needs a model cut into blocks");
}

}  // namespace
}  // namespace balancenet::recompute

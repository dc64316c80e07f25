// FactorLinear is torch::nn::Linear in value (parameters, output, gradients) and captures its factors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include "balancenet/comm/FactorLinear.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::comm {
namespace {

TEST(FactorLinear, SameParametersOutputAndGradientsAsLinear) {
  at::manual_seed(21);
  torch::nn::Linear plain(20, 7);
  at::manual_seed(21);
  FactorLinear factored(20, 7);
  const auto a = plain->named_parameters(), b = factored->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key(), b[i].key());
    EXPECT_TRUE(at::equal(a[i].value(), b[i].value())) << a[i].key();
  }
  const auto x = at::randn({5, 20});
  const auto w = at::randn({5, 7});  // a loss whose output gradient is not uniform
  auto outPlain = plain->forward(x), outFactored = factored->forward(x);
  EXPECT_TRUE(at::equal(outPlain, outFactored));
  (outPlain * w).sum().backward();
  (outFactored * w).sum().backward();
  EXPECT_TRUE(at::equal(plain->weight.grad(), factored->weight.grad()));
  EXPECT_TRUE(at::equal(plain->bias.grad(), factored->bias.grad()));
  // The factors rebuild the gradient: u = dLoss/dOutput = w, v = x.
  EXPECT_TRUE(at::equal(factored->input(), x));
  EXPECT_TRUE(at::equal(factored->outputGrad(), w));
  EXPECT_TRUE(at::allclose(factored->outputGrad().t().mm(factored->input()), factored->weight.grad(), 0, 1e-6));
}

TEST(FactorLinear, ListenerHearsEveryBackwardAndEvaluationCapturesNothing) {
  FactorLinear layer(4, 3);
  int calls = 0;
  layer->setListener([&](const at::Tensor& v, const at::Tensor& u) {
    ++calls;
    EXPECT_EQ(v.sizes(), (at::IntArrayRef{2, 4}));
    EXPECT_EQ(u.sizes(), (at::IntArrayRef{2, 3}));
  });
  {
    at::NoGradGuard noGrad;
    layer->forward(at::ones({2, 4}));
  }
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(layer->outputGrad().defined());
  layer->forward(at::ones({2, 4})).sum().backward();
  EXPECT_EQ(calls, 1);
}

TEST(FactorLinear, ZooModelsKeepNamesAndInitializationThroughTheFactory) {
  for (const std::string name : {"mlp", "alexnet", "vgg16"}) {
    models::ModelOptions options;
    options.name = name;
    options.width = 0.25;
    at::manual_seed(3);
    auto plain = models::buildModel(options);
    options.linear = factorLinearFactory();
    at::manual_seed(3);
    auto factored = models::buildModel(options);
    const auto a = plain.net->named_parameters(), b = factored.net->named_parameters();
    ASSERT_EQ(a.size(), b.size()) << name;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].key(), b[i].key()) << name;
      EXPECT_TRUE(at::equal(a[i].value(), b[i].value())) << name << " " << a[i].key();
    }
    EXPECT_EQ(plain.info.flopsPerSample, factored.info.flopsPerSample) << name;
  }
}

}  // namespace
}  // namespace balancenet::comm

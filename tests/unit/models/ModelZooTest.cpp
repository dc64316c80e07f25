// Unit tests of the model zoo: shapes, gradients, parameter/FLOP accounting, options and the BN factory.
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>

#include "balancenet/core/Error.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::models {
namespace {

const std::vector<std::string> kAllModels = {"cnn", "mlp", "alexnet", "vgg16", "resnet18", "resnet50"};

// Small enough that forward + backward of every model takes well under a second on 2 cores.
double smallWidth(const std::string& name) { return name == "resnet50" ? 0.125 : 0.25; }

ModelOptions options(const std::string& name, double width, double dropout = -1) {
  ModelOptions o;
  o.name = name;
  o.width = width;
  o.dropout = dropout;
  return o;
}

at::Tensor batch(int64_t n = 3) { return at::randn({n, 1, 28, 28}); }

int64_t numelSum(const Network& net) {
  int64_t total = 0;
  for (const auto& p : net.parameters()) total += p.numel();
  return total;
}

// A BatchNorm that counts its forward calls, to prove the model really uses the factory's layers.
class CountingBatchNorm : public torch::nn::Module {
 public:
  CountingBatchNorm(int64_t channels, std::shared_ptr<int64_t> forwards)
      : bn_(register_module("bn", torch::nn::BatchNorm2d(channels))), forwards_(std::move(forwards)) {}
  at::Tensor forward(const at::Tensor& x) {
    ++*forwards_;
    return bn_->forward(x);
  }

 private:
  torch::nn::BatchNorm2d bn_;
  std::shared_ptr<int64_t> forwards_;
};

struct FactoryProbe {
  std::vector<int64_t> channels;  // one entry per factory call
  std::shared_ptr<int64_t> forwards = std::make_shared<int64_t>(0);

  BatchNormFactory factory() {
    return [this](int64_t c) {
      channels.push_back(c);
      return torch::nn::AnyModule(std::make_shared<CountingBatchNorm>(c, forwards));
    };
  }
};

TEST(ModelZoo, NamesInHelpOrder) {
  std::vector<std::string> all = kAllModels;
  all.push_back("gpt");  // the token model, tested in GptTest.cpp
  EXPECT_EQ(modelNames(), all);
}

class EveryModel : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryModel, ForwardGivesLogitsAndBackwardReachesEveryParameter) {
  BuiltModel m = buildModel(options(GetParam(), smallWidth(GetParam())));
  ASSERT_NE(m.net, nullptr);
  m.net->train();
  at::Tensor logits = m.net->forward(batch());
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 10}));
  at::Tensor loss = at::cross_entropy_loss(logits, at::tensor({0, 4, 9}, at::kLong));
  loss.backward();
  for (const auto& p : m.net->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(p.value().grad().isfinite().all().item<bool>()) << p.key();
  }
  m.net->eval();
  EXPECT_EQ(m.net->forward(batch(2)).sizes(), (std::vector<int64_t>{2, 10}));
}

TEST_P(EveryModel, InfoMatchesTheBuiltNetwork) {
  BuiltModel m = buildModel(options(GetParam(), smallWidth(GetParam())));
  EXPECT_EQ(m.info.name, GetParam());
  EXPECT_EQ(m.info.parameters, numelSum(*m.net));
  // Each weight does at least one multiply-add (2 FLOPs); biases and BN parameters are far fewer.
  EXPECT_GT(m.info.flopsPerSample, m.info.parameters);
}

TEST_P(EveryModel, WidthScalesParametersAndFlops) {
  ModelInfo narrow = buildModel(options(GetParam(), 0.125)).info;
  ModelInfo wide = buildModel(options(GetParam(), 0.25)).info;
  EXPECT_LT(narrow.parameters, wide.parameters);
  EXPECT_LT(narrow.flopsPerSample, wide.flopsPerSample);
  // Hidden sizes scale linearly, so the dominant hidden-to-hidden terms grow ~4x; 2x is a safe floor.
  EXPECT_GT(wide.parameters, 2 * narrow.parameters);
}

TEST_P(EveryModel, DropoutZeroIsDeterministicInTrainMode) {
  BuiltModel m = buildModel(options(GetParam(), smallWidth(GetParam()), /*dropout=*/0));
  m.net->train();
  const at::Tensor x = batch();
  EXPECT_TRUE(at::equal(m.net->forward(x), m.net->forward(x)));
}

INSTANTIATE_TEST_SUITE_P(ModelZoo, EveryModel, ::testing::ValuesIn(kAllModels),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(ModelZoo, DefaultDropoutMakesTrainModeRandomButNotEvalMode) {
  // The counterpart of DropoutZeroIsDeterministicInTrainMode: it shows that test can fail.
  BuiltModel m = buildModel(options("cnn", 0.25));
  const at::Tensor x = batch();
  m.net->train();
  EXPECT_FALSE(at::equal(m.net->forward(x), m.net->forward(x)));
  m.net->eval();
  EXPECT_TRUE(at::equal(m.net->forward(x), m.net->forward(x)));
}

TEST(ModelZoo, CnnAtWidthOneMatchesTheKerasModel) {
  ModelInfo info = buildModel(options("cnn", 1.0)).info;
  // conv 1->32: 32*9 + 32 = 320; conv 32->64: 64*32*9 + 64 = 18,496;
  // fc 9216->128: 9216*128 + 128 = 1,179,776; fc 128->10: 1,290.
  EXPECT_EQ(info.parameters, 1'199'882);
  // 2 FLOPs per multiply-add, weights only:
  const int64_t conv1 = 2 * (1 * 3 * 3) * 32 * (26 * 26);   // 28 -> 26:    389,376
  const int64_t conv2 = 2 * (32 * 3 * 3) * 64 * (24 * 24);  // 26 -> 24: 21,233,664
  const int64_t fc1 = 2 * (64 * 12 * 12) * 128;             // pool 24->12: 2,359,296
  const int64_t fc2 = 2 * 128 * 10;                         //                2,560
  EXPECT_EQ(info.flopsPerSample, conv1 + conv2 + fc1 + fc2);
  EXPECT_EQ(info.flopsPerSample, 23'984'896);
  // Activations kept: conv1 32x26x26 + conv2 64x24x24 + pool 64x12x12 + fc 128 + fc 10 = 67,850 floats,
  // x4 bytes, x2 (activation/BN outputs beside them), x2 (their gradients).
  EXPECT_EQ(info.memoryPerSampleBytes, 67'850 * 4 * 2 * 2);
  EXPECT_FALSE(info.hasBatchNorm);
}

TEST(ModelZoo, MlpAtWidthOneMatchesItsLayers) {
  ModelInfo info = buildModel(options("mlp", 1.0)).info;
  EXPECT_EQ(info.parameters, (784 * 256 + 256) + (256 * 128 + 128) + (128 * 10 + 10));  // 235,146
  EXPECT_EQ(info.flopsPerSample, 2 * (784 * 256 + 256 * 128 + 128 * 10));               // 469,504
}

TEST(ModelZoo, CnnHalfWidthHalvesEveryHiddenSize) {
  // 16 and 32 channels, 32*12*12 = 4608 features, 64 hidden units.
  ModelInfo info = buildModel(options("cnn", 0.5)).info;
  EXPECT_EQ(info.parameters, (16 * 9 + 16) + (32 * 16 * 9 + 32) + (4608 * 64 + 64) + (64 * 10 + 10));
}

TEST(ModelZoo, TinyWidthKeepsAtLeastOneChannel) {
  BuiltModel m = buildModel(options("cnn", 1e-6));  // every hidden size rounds to 0, then clamps to 1
  // conv 1->1, conv 1->1, fc 144->1, fc 1->10 (weights + biases)
  EXPECT_EQ(m.info.parameters, (9 + 1) + (9 + 1) + (144 + 1) + (1 * 10 + 10));
  EXPECT_EQ(m.net->forward(batch()).sizes(), (std::vector<int64_t>{3, 10}));
}

TEST(ModelZoo, ResNetParameterCountsMatchTheReferenceCifarModels) {
  // The CIFAR ResNets (3x3 stem, 10 classes) have 11,173,962 and 23,520,842 parameters with RGB input;
  // one input channel instead of three saves 2 * 9 * 64 = 1,152 stem weights.
  EXPECT_EQ(buildModel(options("resnet18", 1.0)).info.parameters, 11'173'962 - 1'152);
  EXPECT_EQ(buildModel(options("resnet50", 1.0)).info.parameters, 23'520'842 - 1'152);
}

TEST(ModelZoo, BatchNormFactoryBuildsEveryBatchNormLayer) {
  // resnet18: stem 1 + 8 blocks * 2 + 3 projection shortcuts = 20; resnet50: 1 + 16 * 3 + 4 = 53;
  // vgg16: one per conv = 13.
  const std::map<std::string, size_t> bnLayers = {{"resnet18", 20}, {"resnet50", 53}, {"vgg16", 13}};
  for (const auto& [name, expected] : bnLayers) {
    FactoryProbe probe;
    ModelOptions o = options(name, smallWidth(name));
    o.batchNorm = probe.factory();
    BuiltModel m = buildModel(o);
    EXPECT_EQ(probe.channels.size(), expected) << name;
    EXPECT_TRUE(m.info.hasBatchNorm) << name;
    EXPECT_EQ(probe.channels.front(), o.scaled(64)) << name << ": the first BN follows the 64-channel stem";
    m.net->train();
    m.net->forward(batch());
    EXPECT_EQ(*probe.forwards, static_cast<int64_t>(expected)) << name << ": each factory layer runs once";
    int64_t plain = 0;
    for (const auto& module : m.net->modules())
      if (std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(module)) ++plain;
    EXPECT_EQ(plain, static_cast<int64_t>(expected)) << name << ": only the factory's (wrapped) BNs";
  }
}

TEST(ModelZoo, EmptyFactoryFallsBackToBatchNorm2d) {
  BuiltModel m = buildModel(options("resnet18", 0.125));
  EXPECT_TRUE(m.info.hasBatchNorm);
  int64_t bn = 0;
  for (const auto& module : m.net->modules())
    if (std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(module)) ++bn;
  EXPECT_EQ(bn, 20);
}

TEST(ModelZoo, ModelsWithoutBatchNormNeverCallTheFactory) {
  for (const std::string name : {"cnn", "mlp", "alexnet"}) {
    FactoryProbe probe;
    ModelOptions o = options(name, 0.25);
    o.batchNorm = probe.factory();
    EXPECT_FALSE(buildModel(o).info.hasBatchNorm) << name;
    EXPECT_TRUE(probe.channels.empty()) << name;
  }
}

TEST(ModelZoo, UnknownNameListsTheModels) {
  try {
    buildModel(options("foo", 1.0));
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown --model 'foo'; choose one of: cnn, mlp, alexnet, vgg16, resnet18, resnet50, gpt");
  }
  EXPECT_THROW(buildModel(options("", 1.0)), UsageError);
  EXPECT_THROW(buildModel(options("CNN", 1.0)), UsageError) << "names are case-sensitive";
}

TEST(ModelZoo, NonPositiveOrNonFiniteWidthIsAUsageError) {
  for (double width : {0.0, -0.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    try {
      buildModel(options("cnn", width));
      ADD_FAILURE() << "width " << width << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--width"), std::string::npos) << e.what();
    }
  }
}

TEST(ModelZoo, DropoutOfOneIsAUsageError) {
  EXPECT_THROW(buildModel(options("cnn", 0.25, 1.0)), UsageError);
  EXPECT_NO_THROW(buildModel(options("cnn", 0.25, 0.9)));
}

}  // namespace
}  // namespace balancenet::models

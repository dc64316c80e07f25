// Unit tests of a TorchScript model's blocks: a module whose forward chains its children is cut at them;
// any other is one block. The modules are scripted here in C++ (no Python torch on the build machines).
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include "BlockRanges.h"
#include "balancenet/core/Error.h"
#include "balancenet/models/ModelZoo.h"
#include "testing/TempDir.h"

namespace balancenet::models {
namespace {

using namespace blocktest;  // NOLINT(google-build-using-namespace): the test helpers of BlockRanges.h

// A scripted module of type `type` with `forward` (TorchScript source of its body) and a training flag.
torch::jit::Module scripted(const std::string& type, const std::string& forwardBody) {
  torch::jit::Module m("__torch__." + type);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.define("def forward(self, x):\n    " + forwardBody + "\n");
  return m;
}

torch::jit::Module scriptedLinear(int64_t in, int64_t out) {
  torch::jit::Module m("__torch__.Linear" + std::to_string(in) + "x" + std::to_string(out));
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight", at::randn({out, in}) * 0.05, false);
  m.register_parameter("bias", at::randn({out}), false);  // non-zero: a probe on zeros still sees the layers
  m.define("def forward(self, x):\n    return torch.matmul(x, self.weight.t()) + self.bias\n");
  return m;
}

// flat -> fc1 -> act -> fc2, with `result` the TorchScript expression forward returns.
std::string saveMlp(const testing::TempDir& dir, const std::string& type, const std::string& result,
                    bool ownParameter = false) {
  torch::jit::Module m("__torch__." + type);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_module("flat", scripted("Flat", "return torch.flatten(x, 1)"));
  m.register_module("fc1", scriptedLinear(784, 16));
  m.register_module("act", scripted("Act", "return torch.relu(x)"));
  m.register_module("fc2", scriptedLinear(16, 10));
  if (ownParameter) m.register_parameter("temperature", at::ones({1}), false);
  m.define("def forward(self, x):\n    return " + result + "\n");
  const std::string path = dir.file(type + ".pt");
  m.save(path);
  return path;
}

// Children are called through forward: a module scripted from C++ has no __call__.
const std::string kChain = "self.fc2.forward(self.act.forward(self.fc1.forward(self.flat.forward(x))))";

BuiltModel load(const std::string& path) {
  ModelOptions o;
  o.name = path;
  return buildModel(o);
}

TEST(ScriptedBlocks, ASequenceOfChildrenIsCutAtThem) {
  testing::TempDir dir;
  BuiltModel m = load(saveMlp(dir, "Sequential", kChain));
  const auto blocks = m.net->blocks();
  ASSERT_EQ(blockNames(blocks), (std::vector<std::string>{"flat", "fc1", "act", "fc2"}));
  EXPECT_EQ(blocks[0].kind, "scripted");
  EXPECT_EQ(blocks[0].parameters, 0);
  EXPECT_EQ(blocks[1].parameters, 784 * 16 + 16);
  EXPECT_EQ(blocks[3].parameters, 16 * 10 + 10);
  EXPECT_EQ(blocks[0].outputShape, (std::vector<int64_t>{784}));
  EXPECT_EQ(blocks[3].outputShape, (std::vector<int64_t>{10}));
  EXPECT_EQ(blocks[1].outputElementsPerSample, 16);
  EXPECT_EQ(blocks[1].memoryPerSampleBytes, 16 * 4 * 2);
  EXPECT_EQ(blocks[1].flopsPerSample, 0);
  int64_t parameters = 0;
  for (const auto& b : blocks) parameters += b.parameters;
  EXPECT_EQ(parameters, m.info.parameters);
}

TEST(ScriptedBlocks, ChainedRangesAreTheNetwork) {
  testing::TempDir dir;
  BuiltModel m = load(saveMlp(dir, "Sequential", kChain));
  const size_t n = m.net->blocks().size();
  const at::Tensor x = at::randn({3, 1, 28, 28});
  const auto whole = parameterImpls(*m.net);
  for (const auto& cuts : cutsOf(n)) {
    for (bool training : {true, false}) {
      m.net->train(training);
      EXPECT_TRUE(at::equal(chain(rangesFor(*m.net, cuts), x), m.net->forward(x))) << cuts.size() - 1 << " ranges";
    }
    EXPECT_EQ(rangeParameterImpls(*m.net, cuts), whole) << cuts.size() - 1 << " ranges";
  }
  // The ranges' parameters are named as the network's (its state_dict names).
  std::vector<std::string> names, rangeNames;
  for (const auto& p : m.net->named_parameters()) names.push_back(p.key());
  for (const auto& range : rangesFor(*m.net, {0, 2, n}))
    for (const auto& p : range->named_parameters()) rangeNames.push_back(p.key());
  EXPECT_EQ(rangeNames, names);
  EXPECT_EQ(names.front(), "fc1.weight");

  expectTheNetworksGradients(*m.net, rangesFor(*m.net, {0, 2, n}), x, at::tensor({0, 3, 7}, at::kLong));
  EXPECT_THROW(m.net->blockRange(2, 2), InternalError);
  EXPECT_THROW(m.net->blockRange(0, n + 1), InternalError);
}

void expectOneBlock(const Network& net) {
  const auto blocks = net.blocks();
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].name, "model");
}

TEST(ScriptedBlocks, AForwardThatIsNotTheChainIsOneBlock) {
  testing::TempDir dir;
  BuiltModel scaled = load(saveMlp(dir, "Scaled", kChain + " * 2.0"));
  expectOneBlock(*scaled.net);
  // A final relu: the chain gives negative logits where forward gives 0.
  BuiltModel clipped = load(saveMlp(dir, "Clipped", "torch.relu(" + kChain + ")"));
  expectOneBlock(*clipped.net);
  // The one-block fallback still runs the whole network.
  const at::Tensor x = at::randn({2, 1, 28, 28});
  EXPECT_TRUE(at::equal(scaled.net->blockRange(0, 1)->forward(x), scaled.net->forward(x)));
  EXPECT_THROW(scaled.net->blockRange(0, 2), InternalError);
}

TEST(ScriptedBlocks, TensorsOfTheModuleItselfMakeItOneBlock) {
  testing::TempDir dir;
  // Chaining the children gives forward exactly (temperature 1), but the temperature is in no child.
  BuiltModel m = load(saveMlp(dir, "Tempered", kChain + " / self.temperature", /*ownParameter=*/true));
  expectOneBlock(*m.net);
}

}  // namespace
}  // namespace balancenet::models

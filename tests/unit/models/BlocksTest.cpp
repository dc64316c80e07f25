// Unit tests of models as blocks: the accounting adds up to ModelInfo, and chained block ranges are the
// network (same output, same parameters, same gradients).
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "BlockRanges.h"
#include "balancenet/core/Error.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::models {
namespace {

using namespace blocktest;  // NOLINT(google-build-using-namespace): the test helpers of BlockRanges.h

BuiltModel build(const std::string& name, double dropout = 0) {
  ModelOptions o;
  o.name = name;
  o.width = name == "resnet50" ? 0.125 : 0.25;  // small: every test runs in well under a second
  o.dropout = dropout;
  return buildModel(o);
}

class EveryModelBlocks : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryModelBlocks, AccountingAddsUpToModelInfo) {
  BuiltModel m = build(GetParam());
  const std::vector<BlockInfo> blocks = m.net->blocks();
  ASSERT_GE(blocks.size(), 3u);
  std::vector<std::string> names = blockNames(blocks);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "names not unique";
  for (const auto& b : blocks) {
    EXPECT_FALSE(b.name.empty());
    EXPECT_FALSE(b.kind.empty());
  }
  expectBlocksAddUpTo(blocks, m.info);
  EXPECT_EQ(blocks.back().outputShape, (std::vector<int64_t>{ModelOptions{}.outputs}));
}

TEST_P(EveryModelBlocks, ChainedRangesGiveTheSameOutputInTrainAndEvalMode) {
  BuiltModel m = build(GetParam());
  const std::vector<BlockInfo> blocks = m.net->blocks();
  const at::Tensor x = at::randn({3, 1, 28, 28});
  for (bool training : {true, false}) {
    m.net->train(training);
    const at::Tensor whole = m.net->forward(x);
    for (const auto& cuts : cutsOf(blocks.size())) {
      EXPECT_TRUE(at::equal(chain(rangesFor(*m.net, cuts), x), whole))
          << (training ? "train" : "eval") << " mode, " << cuts.size() - 1 << " ranges";
    }
  }
}

TEST_P(EveryModelBlocks, EachBlockOutputHasItsShape) {
  BuiltModel m = build(GetParam());
  const std::vector<BlockInfo> blocks = m.net->blocks();
  at::Tensor x = at::randn({2, 1, 28, 28});
  for (size_t i = 0; i < blocks.size(); ++i) {
    x = m.net->blockRange(i, i + 1)->forward(x);
    std::vector<int64_t> expected = {2};
    expected.insert(expected.end(), blocks[i].outputShape.begin(), blocks[i].outputShape.end());
    EXPECT_EQ(x.sizes().vec(), expected) << blocks[i].name;
  }
}

TEST_P(EveryModelBlocks, RangesShareTheNetworksParametersDisjointlyAndInOrder) {
  BuiltModel m = build(GetParam());
  const auto whole = parameterImpls(*m.net);
  std::vector<std::string> wholeNames;
  for (const auto& p : m.net->named_parameters()) wholeNames.push_back(p.key());
  for (const auto& cuts : cutsOf(m.net->blocks().size())) {
    // Equal sequences of distinct pointers: disjoint ranges that together are exactly the network's.
    EXPECT_EQ(rangeParameterImpls(*m.net, cuts), whole) << cuts.size() - 1 << " ranges";
    std::vector<std::string> names;
    for (const auto& range : rangesFor(*m.net, cuts))
      for (const auto& p : range->named_parameters()) names.push_back(p.key());
    EXPECT_EQ(names, wholeNames);
  }
  EXPECT_EQ(std::set<at::TensorImpl*>(whole.begin(), whole.end()).size(), whole.size());
}

TEST_P(EveryModelBlocks, BackwardThroughRangesGivesTheNetworksGradients) {
  BuiltModel m = build(GetParam());
  expectTheNetworksGradients(*m.net, rangesFor(*m.net, thirds(m.net->blocks().size())), at::randn({3, 1, 28, 28}),
                             at::tensor({1, 5, 9}, at::kLong));
}

TEST_P(EveryModelBlocks, EmptyOrOutOfRangeSpansAreRefused) {
  BuiltModel m = build(GetParam());
  const size_t n = m.net->blocks().size();
  EXPECT_THROW(m.net->blockRange(0, 0), InternalError);
  EXPECT_THROW(m.net->blockRange(1, 1), InternalError);
  EXPECT_THROW(m.net->blockRange(2, 1), InternalError);
  EXPECT_THROW(m.net->blockRange(0, n + 1), InternalError);
  EXPECT_THROW(m.net->blockRange(n, n + 1), InternalError);
  EXPECT_NO_THROW(m.net->blockRange(0, n));
}

// The image models: gpt takes token ids and has its own block tests (GptTest.cpp).
std::vector<std::string> imageModelNames() {
  std::vector<std::string> names = modelNames();
  names.erase(std::remove(names.begin(), names.end(), "gpt"), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Blocks, EveryModelBlocks, ::testing::ValuesIn(imageModelNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Blocks, NamesAndKindsFollowTheLayers) {
  EXPECT_EQ(blockNames(build("cnn").net->blocks()), (std::vector<std::string>{"conv1", "conv2", "fc1", "fc2"}));
  EXPECT_EQ(blockNames(build("mlp").net->blocks()), (std::vector<std::string>{"fc1", "fc2", "fc3"}));
  const auto resnet = build("resnet18").net->blocks();
  EXPECT_EQ(blockNames(resnet), (std::vector<std::string>{"stem", "res1.1", "res1.2", "res2.1", "res2.2", "res3.1",
                                                          "res3.2", "res4.1", "res4.2", "fc1"}));
  EXPECT_EQ(resnet[0].kind, "conv");
  EXPECT_EQ(resnet[1].kind, "residual");
  EXPECT_EQ(resnet.back().kind, "linear");
  const auto vgg = build("vgg16").net->blocks();
  EXPECT_EQ(vgg.size(), 15u);  // 13 convs, 2 linears
  EXPECT_EQ(vgg.front().name, "conv1");
  EXPECT_EQ(vgg.back().name, "fc2");
}

TEST(Blocks, LayersAttachToTheBlockBeforeThem) {
  // mlp's leading flatten joins fc1; cnn's pool joins conv2, its flatten too.
  const auto mlp = build("mlp").net->blocks();
  EXPECT_EQ(mlp[0].outputShape, (std::vector<int64_t>{64}));  // 256 * 0.25
  EXPECT_EQ(mlp[0].flopsPerSample, 2 * 784 * 64);
  const auto cnn = build("cnn").net->blocks();
  EXPECT_EQ(cnn[0].outputShape, (std::vector<int64_t>{8, 26, 26}));
  EXPECT_EQ(cnn[1].outputShape, (std::vector<int64_t>{16 * 12 * 12}));
  EXPECT_EQ(cnn[1].flopsPerSample, 2 * 8 * 9 * 16 * 24 * 24);
  // conv2's activations: its 16x24x24 output and the 16x12x12 pool (ShapeTracker counts both).
  EXPECT_EQ(cnn[1].memoryPerSampleBytes, (16 * 24 * 24 + 16 * 12 * 12) * 16);
}

TEST(Blocks, EvalOnTheNetworkReachesTheRangesLayers) {
  BuiltModel m = build("cnn", /*dropout=*/0.5);  // dropout makes train mode random, eval mode not
  const size_t n = m.net->blocks().size();
  auto ranges = rangesFor(*m.net, {0, 1, n});
  const at::Tensor x = at::randn({3, 1, 28, 28});
  m.net->train();
  EXPECT_FALSE(at::equal(chain(ranges, x), chain(ranges, x)));
  m.net->eval();
  EXPECT_TRUE(at::equal(chain(ranges, x), m.net->forward(x)));
}

}  // namespace
}  // namespace balancenet::models

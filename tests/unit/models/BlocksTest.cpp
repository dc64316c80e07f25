// Unit tests of models as blocks: the accounting adds up to ModelInfo, and chained block ranges are the
// network (same output, same parameters, same gradients).
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::models {
namespace {

BuiltModel build(const std::string& name, double dropout = 0) {
  ModelOptions o;
  o.name = name;
  o.width = name == "resnet50" ? 0.125 : 0.25;  // small: every test runs in well under a second
  o.dropout = dropout;
  return buildModel(o);
}

std::vector<std::string> namesOf(const std::vector<BlockInfo>& blocks) {
  std::vector<std::string> names;
  for (const auto& b : blocks) names.push_back(b.name);
  return names;
}

// Cut points [0, c1, ..., n] of three ranges (every zoo model has at least 3 blocks).
std::vector<size_t> thirds(size_t n) { return {0, n / 3, 2 * n / 3, n}; }

// Every single block, halves, thirds.
std::vector<std::vector<size_t>> cutsOf(size_t n) {
  std::vector<size_t> single;
  for (size_t i = 0; i <= n; ++i) single.push_back(i);
  return {single, {0, n / 2, n}, thirds(n)};
}

std::vector<std::shared_ptr<BlockRange>> rangesFor(Network& net, const std::vector<size_t>& cuts) {
  std::vector<std::shared_ptr<BlockRange>> ranges;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) ranges.push_back(net.blockRange(cuts[i], cuts[i + 1]));
  return ranges;
}

at::Tensor chain(const std::vector<std::shared_ptr<BlockRange>>& ranges, at::Tensor x) {
  for (const auto& r : ranges) x = r->forward(x);
  return x;
}

class EveryModelBlocks : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryModelBlocks, AccountingAddsUpToModelInfo) {
  BuiltModel m = build(GetParam());
  const std::vector<BlockInfo> blocks = m.net->blocks();
  ASSERT_GE(blocks.size(), 3u);
  std::vector<std::string> names = namesOf(blocks);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "names not unique";
  int64_t flops = 0, memory = 0, parameters = 0;
  for (const auto& b : blocks) {
    EXPECT_FALSE(b.name.empty());
    EXPECT_FALSE(b.kind.empty());
    int64_t elements = 1;
    for (int64_t d : b.outputShape) elements *= d;
    EXPECT_EQ(b.outputElementsPerSample, elements) << b.name;
    EXPECT_GT(b.memoryPerSampleBytes, 0) << b.name;
    flops += b.flopsPerSample;
    memory += b.memoryPerSampleBytes;
    parameters += b.parameters;
  }
  EXPECT_EQ(flops, m.info.flopsPerSample);
  EXPECT_EQ(memory, m.info.memoryPerSampleBytes);
  EXPECT_EQ(parameters, m.info.parameters);
  EXPECT_EQ(blocks.back().outputShape, (std::vector<int64_t>{Network::kNumClasses}));
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
  std::vector<at::TensorImpl*> whole;
  for (const auto& p : m.net->parameters()) whole.push_back(p.unsafeGetTensorImpl());
  std::vector<std::string> wholeNames;
  for (const auto& p : m.net->named_parameters()) wholeNames.push_back(p.key());
  for (const auto& cuts : cutsOf(m.net->blocks().size())) {
    std::vector<at::TensorImpl*> concatenated;
    std::vector<std::string> names;
    for (const auto& range : rangesFor(*m.net, cuts)) {
      for (const auto& p : range->parameters()) concatenated.push_back(p.unsafeGetTensorImpl());
      for (const auto& p : range->named_parameters()) names.push_back(p.key());
    }
    // Equal sequences of distinct pointers: disjoint ranges that together are exactly the network's.
    EXPECT_EQ(concatenated, whole) << cuts.size() - 1 << " ranges";
    EXPECT_EQ(names, wholeNames);
  }
  EXPECT_EQ(std::set<at::TensorImpl*>(whole.begin(), whole.end()).size(), whole.size());
}

TEST_P(EveryModelBlocks, BackwardThroughRangesGivesTheNetworksGradients) {
  BuiltModel m = build(GetParam());
  m.net->train();
  const at::Tensor x = at::randn({3, 1, 28, 28});
  const at::Tensor labels = at::tensor({1, 5, 9}, at::kLong);
  at::cross_entropy_loss(m.net->forward(x), labels).backward();
  std::vector<at::Tensor> expected;
  for (auto& p : m.net->parameters()) {
    expected.push_back(p.grad().clone());
    p.mutable_grad().zero_();
  }
  const size_t n = m.net->blocks().size();
  at::cross_entropy_loss(chain(rangesFor(*m.net, thirds(n)), x), labels).backward();
  const auto params = m.net->parameters();
  ASSERT_EQ(params.size(), expected.size());
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(at::equal(params[i].grad(), expected[i])) << i;
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

INSTANTIATE_TEST_SUITE_P(Blocks, EveryModelBlocks, ::testing::ValuesIn(modelNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Blocks, NamesAndKindsFollowTheLayers) {
  EXPECT_EQ(namesOf(build("cnn").net->blocks()), (std::vector<std::string>{"conv1", "conv2", "fc1", "fc2"}));
  EXPECT_EQ(namesOf(build("mlp").net->blocks()), (std::vector<std::string>{"fc1", "fc2", "fc3"}));
  const auto resnet = build("resnet18").net->blocks();
  EXPECT_EQ(namesOf(resnet), (std::vector<std::string>{"stem", "res1.1", "res1.2", "res2.1", "res2.2", "res3.1",
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

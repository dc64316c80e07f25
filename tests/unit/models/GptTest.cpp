// Unit tests of the gpt model: shapes, causality, its blocks and their cost, every cut, the tie, the checks.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "BlockRanges.h"
#include "GptTesting.h"
#include "balancenet/core/Error.h"
#include "balancenet/models/Gpt.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::models {
namespace {

using namespace blocktest;  // NOLINT(google-build-using-namespace): the test helpers of BlockRanges.h
using gpttest::kContext;
using gpttest::kVocab;
using gpttest::smallGpt;
using gpttest::tokenLoss;
using gpttest::tokens;

TEST(Gpt, ForwardGivesLogitsPerTokenAndBackwardReachesEveryParameter) {
  BuiltModel m = buildModel(smallGpt());
  m.net->train();
  EXPECT_EQ(m.net->forward(tokens(3, kContext)).sizes(), (std::vector<int64_t>{3, kContext, kVocab}));
  const at::Tensor shorter = m.net->forward(tokens(2, 5));  // a window shorter than the context is fine
  EXPECT_EQ(shorter.sizes(), (std::vector<int64_t>{2, 5, kVocab}));
  tokenLoss(m.net->forward(tokens(3, kContext)), tokens(3, kContext, 9)).backward();
  for (const auto& p : m.net->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  }
}

TEST(Gpt, ParameterNamesAreNanoGpts) {
  BuiltModel m = buildModel(smallGpt());
  const auto names = m.net->named_parameters().keys();
  ASSERT_EQ(names.size(), 2u + 2 * 12 + 2);  // wte, wpe; per block 2 LayerNorms x2 + 4 linears x2; ln_f x2
  EXPECT_EQ(names.front(), "transformer.wte.weight");
  EXPECT_EQ(names[1], "transformer.wpe.weight");
  EXPECT_EQ(names[2], "transformer.h.0.ln_1.weight");
  EXPECT_EQ(names[4], "transformer.h.0.attn.c_attn.weight");
  EXPECT_EQ(names.back(), "transformer.ln_f.bias");
}

TEST(Gpt, ChangingTokenTChangesNoLogitBeforeT) {
  BuiltModel m = buildModel(smallGpt());
  m.net->eval();
  const at::Tensor x = tokens(2, kContext);
  const at::Tensor before = m.net->forward(x);
  for (int64_t t : {int64_t{0}, int64_t{5}, kContext - 1}) {
    at::Tensor changed = x.clone();
    changed.select(1, t).add_(1).remainder_(kVocab);
    const at::Tensor after = m.net->forward(changed);
    EXPECT_TRUE(at::equal(after.narrow(1, 0, t), before.narrow(1, 0, t))) << "token " << t;
    // ...and it does change the logits at t: the test would see a leak.
    EXPECT_GT((after.select(1, t) - before.select(1, t)).abs().max().item<double>(), 1e-4) << "token " << t;
  }
}

TEST(Gpt, BlocksAreEmbedTransformerBlocksAndHeadAndAddUpToModelInfo) {
  BuiltModel m = buildModel(smallGpt());
  const auto blocks = m.net->blocks();
  EXPECT_EQ(blockNames(blocks), (std::vector<std::string>{"embed", "block1", "block2", "head"}));
  for (const auto& b : blocks) {
    const std::vector<int64_t> shape =
        b.name == "head" ? std::vector<int64_t>{kContext, kVocab} : std::vector<int64_t>{kContext, gpttest::kEmbed};
    EXPECT_EQ(b.outputShape, shape) << b.name;
  }
  expectBlocksAddUpTo(blocks, m.info);  // parameters too: the tied weight is counted once, in embed
  EXPECT_FALSE(m.info.hasBatchNorm);
}

// 2 layers, 2 heads, embed 32, context 16, vocabulary 65, counted layer by layer (2 per multiply-add).
TEST(Gpt, FlopsPerSampleAreAHandCount) {
  const int64_t t = 16, c = 32, heads = 2, headSize = 16, v = 65;
  const int64_t qkv = 2 * t * c * (3 * c);
  const int64_t scores = heads * 2 * t * t * headSize;  // Q K^T: [T,hs] x [hs,T] per head
  const int64_t mix = heads * 2 * t * t * headSize;     // att V: [T,T] x [T,hs] per head
  const int64_t proj = 2 * t * c * c;
  const int64_t mlp = 2 * t * c * (4 * c) + 2 * t * (4 * c) * c;
  const int64_t block = qkv + scores + mix + proj + mlp;
  const int64_t head = 2 * t * c * v;
  BuiltModel m = buildModel(smallGpt());
  const auto blocks = m.net->blocks();
  EXPECT_EQ(blocks[0].flopsPerSample, 0);
  EXPECT_EQ(blocks[1].flopsPerSample, block);
  EXPECT_EQ(blocks[1].flopsPerSample, 425984);
  EXPECT_EQ(blocks[3].flopsPerSample, head);
  EXPECT_EQ(m.info.flopsPerSample, 2 * block + head);
}

// Every way to cut the 4 blocks into contiguous ranges, chained, is forward(), with the same gradients.
TEST(Gpt, EveryCutChainedIsTheNetwork) {
  BuiltModel m = buildModel(smallGpt());
  const at::Tensor x = tokens(2, kContext), y = tokens(2, kContext, 5);
  const size_t n = m.net->blocks().size();
  for (bool training : {true, false}) {
    m.net->train(training);
    const at::Tensor whole = m.net->forward(x);
    const auto wholeGrads = gradientsAfter(*m.net, [&] { tokenLoss(m.net->forward(x), y).backward(); });
    for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {  // bit i: a cut after block i
      std::vector<size_t> cuts = {0};
      for (size_t i = 0; i + 1 < n; ++i)
        if (mask & (1u << i)) cuts.push_back(i + 1);
      cuts.push_back(n);
      const auto ranges = rangesFor(*m.net, cuts);
      EXPECT_TRUE(at::equal(chain(ranges, x), whole)) << "cut mask " << mask;
      const auto grads = gradientsAfter(*m.net, [&] { tokenLoss(chain(ranges, x), y).backward(); });
      ASSERT_EQ(grads.size(), wholeGrads.size());
      for (size_t i = 0; i < grads.size(); ++i)
        EXPECT_TRUE(at::allclose(grads[i], wholeGrads[i], 0, 1e-7)) << "cut mask " << mask << ", parameter " << i;
    }
  }
}

TEST(Gpt, BlocksChainedEqualForwardWithDropoutFromTheSameSeed) {
  BuiltModel m = buildModel(smallGpt(0.2));
  m.net->train();
  const at::Tensor x = tokens(2, kContext);
  at::manual_seed(7);
  const at::Tensor whole = m.net->forward(x);
  at::manual_seed(7);
  const auto n = m.net->blocks().size();
  at::Tensor chained = x;
  for (size_t b = 0; b < n; ++b) chained = m.net->blockRange(b, b + 1)->forward(chained);
  EXPECT_TRUE(at::equal(chained, whole));
  at::manual_seed(8);
  EXPECT_FALSE(at::equal(m.net->forward(x), whole)) << "dropout 0.2 in training mode should draw masks";
}

TEST(Gpt, RangesHoldTheNetworksTensorsAndAHeadWithoutEmbedHoldsTheTiedWeight) {
  BuiltModel m = buildModel(smallGpt());
  const auto all = parameterImpls(*m.net);
  EXPECT_EQ(rangeParameterImpls(*m.net, {0, 4}), all);
  EXPECT_EQ(rangeParameterImpls(*m.net, {0, 2, 4}).size(), all.size() + 1);  // wte in both ranges
  const auto head = m.net->blockRange(3, 4);
  const auto headNames = head->named_parameters().keys();
  EXPECT_EQ(headNames,
            (std::vector<std::string>{"transformer.wte.weight", "transformer.ln_f.weight", "transformer.ln_f.bias"}));
  EXPECT_EQ(head->parameters().front().unsafeGetTensorImpl(), all.front());
  // The range's names are the network's names of the same tensors.
  const auto netParams = m.net->named_parameters();
  for (const auto& p : m.net->blockRange(1, 3)->named_parameters())
    EXPECT_EQ(netParams[p.key()].unsafeGetTensorImpl(), p.value().unsafeGetTensorImpl()) << p.key();
}

TEST(Gpt, UntiedTheHeadHasItsOwnCopyAndEveryCutHoldsEachTensorOnce) {
  BuiltModel m = buildModel(smallGpt());
  auto& gpt = dynamic_cast<Gpt&>(*m.net);
  const at::Tensor x = tokens(2, kContext), y = tokens(2, kContext, 3);
  m.net->eval();
  const at::Tensor before = m.net->forward(x);
  gpt.untieHead();
  gpt.untieHead();  // idempotent
  EXPECT_FALSE(gpt.tied());
  const auto named = m.net->named_parameters();
  ASSERT_EQ(named.size(), 29u);
  EXPECT_EQ(named.keys().back(), "lm_head.weight");
  EXPECT_TRUE(at::equal(named["lm_head.weight"], named["transformer.wte.weight"]));
  EXPECT_NE(named["lm_head.weight"].unsafeGetTensorImpl(), named["transformer.wte.weight"].unsafeGetTensorImpl());
  EXPECT_TRUE(at::equal(m.net->forward(x), before)) << "untying alone changes nothing";
  const auto all = parameterImpls(*m.net);
  for (const auto& cuts : cutsOf(4)) EXPECT_EQ(rangeParameterImpls(*m.net, cuts), all);
  const auto blocks = m.net->blocks();
  EXPECT_EQ(blocks.back().parameters, kVocab * gpttest::kEmbed + 2 * gpttest::kEmbed);

  // The head's loss trains lm_head, not the embedding's use as the head.
  m.net->zero_grad();
  const auto headOnly = m.net->blockRange(3, 4);
  tokenLoss(headOnly->forward(at::randn({2, kContext, gpttest::kEmbed})), y).backward();
  EXPECT_GT(named["lm_head.weight"].grad().abs().sum().item<double>(), 0);
  const at::Tensor wteGrad = named["transformer.wte.weight"].grad();
  EXPECT_TRUE(!wteGrad.defined() || wteGrad.abs().sum().item<double>() == 0);
}

TEST(Gpt, InitialisationIsNanoGpts) {
  ModelOptions o = smallGpt();
  o.layers = 8;
  o.embed = 64;
  at::manual_seed(3);
  BuiltModel m = buildModel(o);
  const auto p = m.net->named_parameters();
  EXPECT_NEAR(p["transformer.wte.weight"].std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(p["transformer.h.0.mlp.c_fc.weight"].std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(p["transformer.h.3.mlp.c_proj.weight"].std().item<double>(), 0.02 / std::sqrt(16.0), 0.0003);
  EXPECT_NEAR(p["transformer.h.3.attn.c_proj.weight"].std().item<double>(), 0.02 / std::sqrt(16.0), 0.0005);
  EXPECT_EQ(p["transformer.h.1.attn.c_attn.bias"].abs().sum().item<double>(), 0);
  EXPECT_TRUE(at::equal(p["transformer.ln_f.weight"], at::ones({64})));
  at::manual_seed(3);
  const auto again = buildModel(o).net->parameters();
  const auto first = m.net->parameters();
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(at::equal(first[i], again[i])) << i;
}

TEST(Gpt, BadSizesAreOneLineUsageErrors) {
  auto expectError = [](ModelOptions o, const std::string& part) {
    try {
      buildModel(o);
      ADD_FAILURE() << "no error, expected one naming " << part;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(part), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  };
  struct Case {
    std::function<void(ModelOptions&)> change;
    std::string part;  // of the message
  };
  const std::vector<Case> cases = {
      {[](ModelOptions& o) {
         o.embed = 30;
         o.heads = 4;
       },
       "--embed 30 is not a multiple of --heads 4"},
      {[](ModelOptions& o) { o.layers = 0; }, "--layers must be at least 1"},
      {[](ModelOptions& o) { o.heads = 0; }, "--heads must be at least 1"},
      {[](ModelOptions& o) { o.embed = 0; }, "--embed must be at least 1"},
      {[](ModelOptions& o) { o.inputShape = {0}; }, "--context"},
      {[](ModelOptions& o) {
         o.inputShape = {1, 28, 28};
       },
       "--context"},
      {[](ModelOptions& o) { o.outputs = 0; }, "vocabulary"},
  };
  for (const Case& c : cases) {
    ModelOptions o = smallGpt();
    c.change(o);
    expectError(o, c.part);
  }
}

TEST(Gpt, InputThatDoesNotFitIsAUsageError) {
  BuiltModel m = buildModel(smallGpt());
  EXPECT_THROW(m.net->forward(tokens(1, kContext + 1)), UsageError);
  EXPECT_THROW(m.net->forward(at::zeros({1, 4})), UsageError);  // float, not token ids
  EXPECT_THROW(m.net->forward(tokens(1, 4).view({4})), UsageError);
}

}  // namespace
}  // namespace balancenet::models

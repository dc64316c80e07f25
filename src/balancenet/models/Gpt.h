// Gpt: a decoder-only transformer language model (GPT-2's structure, as nanoGPT writes it).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include "balancenet/models/GptBlocks.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/Network.h"

namespace balancenet::models {

// The modules of a gpt, which the network and its block ranges share.
struct GptParts {
  torch::nn::Embedding wte{nullptr};  // token embedding [vocab, C]; the head's weight while tied
  torch::nn::Embedding wpe{nullptr};  // learned position embedding [context, C]
  torch::nn::Dropout drop{nullptr};
  std::vector<std::shared_ptr<GptBlock>> h;
  torch::nn::LayerNorm lnF{nullptr};
  // The head's own weight [vocab, C] once untied (untieHead), else null: the head uses wte's weight.
  std::shared_ptr<torch::nn::Module> lmHead;
};

// Input [N,T] int64 token ids (1 <= T <= context), output logits [N,T,vocab]. ModelOptions: inputShape {T}
// (the context), outputs (the vocabulary), layers, heads, embed, dropout (default 0); width is not used.
//
// Parameter names are nanoGPT's ("transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", ...,
// "transformer.ln_f.weight"), so an exported state dict loads into nanoGPT's GPT once "lm_head.weight"
// is set to "transformer.wte.weight" (Python keeps both names for the one tied tensor; we keep one).
//
// Blocks for pipeline cutting: "embed" (kind "embedding": token + position embedding and dropout),
// "block1".."blockL" (kind "transformer"), "head" (kind "head": final LayerNorm + language-model head).
// Output shapes {T, embed} between blocks, {T, vocab} after the head. FLOPs per sample (a sequence of T
// tokens), 2 per multiply-add as ShapeTracker counts, C = embed, V = vocab:
//   embed 0 (lookups); each block 24*T*C^2 (qkv 6, attention projection 2, MLP 8 + 8) + 4*T^2*C (the
//   QK^T and AV matmuls, the masked half included: it is computed); head 2*T*C*V.
// Memory per sample: ShapeTracker::trainingBytes of the matmul outputs: embed T*C, a block
// 10*T*C + heads*T^2 (qkv 3TC, scores heads*T^2, AV TC, projection TC, MLP 4TC + TC), head T*V.
//
// The tie: the head's weight is the token embedding's, one tensor, one parameter of the network.
// - A block range holding both "embed" and "head" shares it as the network does.
// - A range holding "head" without "embed", while tied, holds the network's wte tensor itself (named
//   "transformer.wte.weight" as in the network), so it works on its own in one process (profiling a
//   block, chaining ranges: the gradients of both uses add up in the one tensor, as in the network).
// - A pipeline whose stages cut embed from head must call untieHead() first, on every rank alike:
//   the head gets its own parameter "lm_head.weight", a copy of the embedding at that moment, and from
//   then on the two are trained apart (untied). Without it two stages would own the same tensor, and
//   the engine, which gives each tensor to one block, would gather or restore it twice.
class Gpt : public Network {
 public:
  // Throws UsageError (one line) unless inputShape is {context >= 1}, outputs >= 1, layers, heads and
  // embed >= 1, embed % heads == 0 and 0 <= dropout < 1. Initialised as nanoGPT (see initGptWeights)
  // from the global torch generator.
  explicit Gpt(const ModelOptions& options);

  at::Tensor forward(const at::Tensor& tokens) override;
  std::vector<BlockInfo> blocks() const override;
  std::shared_ptr<BlockRange> blockRange(size_t first, size_t end) override;

  // Gives the head its own weight, equal to the token embedding now; idempotent. Changes parameters()
  // (one more, appended), so call it before an optimiser or a gradient sync takes the parameters, and
  // before taking block ranges (a range taken earlier keeps using the embedding's weight).
  void untieHead();
  void separateSharedWeights() override { untieHead(); }
  bool tied() const { return parts_.lmHead == nullptr; }
  const GptConfig& config() const { return config_; }

 private:
  GptConfig config_;
  GptParts parts_;
};

// Runs blocks [first, end) of `parts` (0: embed, 1..L: the transformer blocks, L+1: head) on x.
at::Tensor runGptBlocks(GptParts& parts, size_t first, size_t end, at::Tensor x);

// The zoo's build of "gpt": the network and its ModelInfo (the sums over its blocks; no BatchNorm).
BuiltModel buildGpt(const ModelOptions& options);

}  // namespace balancenet::models

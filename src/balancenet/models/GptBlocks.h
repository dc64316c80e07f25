// GptBlocks: the parts of the gpt model (nanoGPT's structure): causal self-attention, the MLP, a block.
#pragma once
#include <cstdint>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

namespace balancenet::models {

// The sizes of a gpt (GPT-2's names in nanoGPT: vocab_size, block_size, n_layer, n_head, n_embd).
struct GptConfig {
  int64_t vocab = 0;
  int64_t context = 0;  // the longest sequence: rows of the position embedding
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t embed = 0;
  double dropout = 0;
};

// Multi-head self-attention where token t sees tokens 0..t only: one linear makes q, k and v of every
// head ("c_attn"), softmax(q k^T / sqrt(head size)) with the future masked out, then "c_proj".
class CausalSelfAttention : public torch::nn::Module {
 public:
  explicit CausalSelfAttention(const GptConfig& config);
  at::Tensor forward(const at::Tensor& x);  // [N,T,C] -> [N,T,C]

 private:
  int64_t heads_;
  torch::nn::Linear cAttn_{nullptr};
  torch::nn::Linear cProj_{nullptr};
  torch::nn::Dropout attnDropout_{nullptr};
  torch::nn::Dropout residDropout_{nullptr};
};

// Linear to 4x the width, GELU (exact, erf), linear back, dropout.
class GptMlp : public torch::nn::Module {
 public:
  explicit GptMlp(const GptConfig& config);
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::Linear cFc_{nullptr};
  torch::nn::Linear cProj_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};

// Pre-LayerNorm transformer block: x + attn(ln_1(x)), then + mlp(ln_2(x)).
class GptBlock : public torch::nn::Module {
 public:
  explicit GptBlock(const GptConfig& config);
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::LayerNorm ln1_{nullptr};
  std::shared_ptr<CausalSelfAttention> attn_;
  torch::nn::LayerNorm ln2_{nullptr};
  std::shared_ptr<GptMlp> mlp_;
};

// The token embedding (also the language-model head's weight while tied), position embedding and
// the dropout after their sum: [N,T] int64 token ids -> [N,T,C].
at::Tensor embedTokens(torch::nn::Embedding& wte, torch::nn::Embedding& wpe, torch::nn::Dropout& drop,
                       const at::Tensor& tokens);

// The final LayerNorm and the language-model head (no bias): [N,T,C] -> [N,T,vocab] logits.
at::Tensor headLogits(torch::nn::LayerNorm& lnF, const at::Tensor& headWeight, const at::Tensor& x);

// nanoGPT's initialisation from the global torch generator: every linear and embedding weight
// normal(0, 0.02), biases zero, LayerNorm (1, 0); the residual projections ("c_proj") normal(0,
// 0.02 / sqrt(2 * layers)), so that the residual stream's variance does not grow with depth.
void initGptWeights(torch::nn::Module& model, int64_t layers);

}  // namespace balancenet::models

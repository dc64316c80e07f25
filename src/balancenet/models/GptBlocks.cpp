// GptBlocks: forward passes and initialisation of the gpt model's parts.
#include "balancenet/models/GptBlocks.h"

#include <cmath>
#include <limits>
#include <string>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/nn/init.h>

#include "balancenet/core/Error.h"

namespace balancenet::models {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

CausalSelfAttention::CausalSelfAttention(const GptConfig& config)
    : heads_(config.heads),
      cAttn_(register_module("c_attn", torch::nn::Linear(config.embed, 3 * config.embed))),
      cProj_(register_module("c_proj", torch::nn::Linear(config.embed, config.embed))),
      attnDropout_(register_module("attn_dropout", torch::nn::Dropout(config.dropout))),
      residDropout_(register_module("resid_dropout", torch::nn::Dropout(config.dropout))) {}

at::Tensor CausalSelfAttention::forward(const at::Tensor& x) {
  const int64_t n = x.size(0), t = x.size(1), c = x.size(2), headSize = c / heads_;
  // [N,T,3C] -> q, k, v as [N,heads,T,headSize]: the heads become a batch dimension.
  const auto qkv = cAttn_->forward(x).split(c, 2);
  auto perHead = [&](const at::Tensor& m) { return m.view({n, t, heads_, headSize}).transpose(1, 2); };
  const at::Tensor q = perHead(qkv[0]), k = perHead(qkv[1]), v = perHead(qkv[2]);
  at::Tensor att = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(headSize)));
  // The future (above the diagonal) gets -inf, so softmax gives it weight 0.
  const at::Tensor future = at::ones({t, t}, x.options().dtype(at::kBool)).triu(1);
  att = at::softmax(att.masked_fill(future, -std::numeric_limits<float>::infinity()), -1);
  att = attnDropout_->forward(att);
  const at::Tensor y = at::matmul(att, v).transpose(1, 2).contiguous().view({n, t, c});
  return residDropout_->forward(cProj_->forward(y));
}

GptMlp::GptMlp(const GptConfig& config)
    : cFc_(register_module("c_fc", torch::nn::Linear(config.embed, 4 * config.embed))),
      cProj_(register_module("c_proj", torch::nn::Linear(4 * config.embed, config.embed))),
      dropout_(register_module("dropout", torch::nn::Dropout(config.dropout))) {}

at::Tensor GptMlp::forward(const at::Tensor& x) {
  return dropout_->forward(cProj_->forward(at::gelu(cFc_->forward(x))));
}

GptBlock::GptBlock(const GptConfig& config)
    : ln1_(register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.embed})))),
      attn_(register_module("attn", std::make_shared<CausalSelfAttention>(config))),
      ln2_(register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.embed})))),
      mlp_(register_module("mlp", std::make_shared<GptMlp>(config))) {}

at::Tensor GptBlock::forward(const at::Tensor& x) {
  const at::Tensor h = x + attn_->forward(ln1_->forward(x));
  return h + mlp_->forward(ln2_->forward(h));
}

at::Tensor embedTokens(torch::nn::Embedding& wte, torch::nn::Embedding& wpe, torch::nn::Dropout& drop,
                       const at::Tensor& tokens) {
  // Data that does not fit the model is the user's (a data set's windows against --context), not a bug.
  const int64_t context = wpe->weight.size(0);
  if (tokens.dim() != 2 || tokens.scalar_type() != at::kLong || tokens.size(1) < 1 || tokens.size(1) > context)
    throw UsageError(fmt::format("gpt takes [N,T] int64 token ids with 1 <= T <= its context of {}, got {} [{}]",
                                 context, c10::toString(tokens.scalar_type()), fmt::join(tokens.sizes(), "x")));
  const at::Tensor positions = at::arange(tokens.size(1), tokens.options().dtype(at::kLong));
  return drop->forward(wte->forward(tokens) + wpe->forward(positions));
}

at::Tensor headLogits(torch::nn::LayerNorm& lnF, const at::Tensor& headWeight, const at::Tensor& x) {
  return at::linear(lnF->forward(x), headWeight);
}

void initGptWeights(torch::nn::Module& model, int64_t layers) {
  const double residualStd = 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
  at::NoGradGuard noGrad;
  for (auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    at::Tensor p = item.value();
    if (name.find("ln_") != std::string::npos) continue;  // LayerNorm: already (1, 0)
    if (endsWith(name, ".bias"))
      torch::nn::init::zeros_(p);
    else
      torch::nn::init::normal_(p, 0.0, endsWith(name, "c_proj.weight") ? residualStd : 0.02);
  }
}

}  // namespace balancenet::models

// GptTesting: the small gpt of the tests, token batches and the token cross-entropy.
#pragma once
#include <cstdint>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "balancenet/models/ModelZoo.h"

namespace balancenet::models::gpttest {

constexpr int64_t kLayers = 2;
constexpr int64_t kHeads = 2;
constexpr int64_t kEmbed = 32;
constexpr int64_t kContext = 16;
constexpr int64_t kVocab = 65;  // a character-level vocabulary, as nanoGPT's shakespeare_char

inline ModelOptions smallGpt(double dropout = 0) {
  ModelOptions o;
  o.name = "gpt";
  o.inputShape = {kContext};
  o.tokenInput = true;
  o.outputs = kVocab;
  o.layers = kLayers;
  o.heads = kHeads;
  o.embed = kEmbed;
  o.dropout = dropout;
  return o;
}

// [n, t] token ids drawn from their own generator, so the global one (the model's init) is untouched.
inline at::Tensor tokens(int64_t n, int64_t t, uint64_t seed = 1) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randint(kVocab, {n, t}, generator, at::kLong);
}

// Mean cross-entropy over every token: logits [N,T,V], targets [N,T].
inline at::Tensor tokenLoss(const at::Tensor& logits, const at::Tensor& targets) {
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
}

}  // namespace balancenet::models::gpttest

// Gpt: construction and checks, the forward pass, the blocks with their cost, block ranges and the tie.
#include "balancenet/models/Gpt.h"

#include <algorithm>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

namespace {

GptConfig configFrom(const ModelOptions& o) {
  require(o.inputShape.size() == 1 && o.inputShape[0] >= 1,
          fmt::format("gpt takes token windows: the context (--context) must be at least 1, got input shape [{}]",
                      fmt::join(o.inputShape, "x")));
  require(o.outputs >= 1, fmt::format("gpt needs a vocabulary of at least 1 token, got {}", o.outputs));
  require(o.layers >= 1, fmt::format("--layers must be at least 1, got {}", o.layers));
  require(o.heads >= 1, fmt::format("--heads must be at least 1, got {}", o.heads));
  require(o.embed >= 1, fmt::format("--embed must be at least 1, got {}", o.embed));
  require(o.embed % o.heads == 0, fmt::format("--embed {} is not a multiple of --heads {}", o.embed, o.heads));
  const double dropout = o.dropoutOr(0.0);
  require(dropout >= 0 && dropout < 1, fmt::format("--dropout must be in [0, 1), got {}", o.dropout));
  return {o.outputs, o.inputShape[0], o.layers, o.heads, o.embed, dropout};
}

int64_t numelOf(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

// Registers the modules of blocks [first, end) on `owner` under the network's names, so that a range's
// named_parameters() read as the network's (see Gpt.h for the tied head's weight).
void registerParts(torch::nn::Module& owner, const GptParts& parts, size_t first, size_t end) {
  const size_t head = parts.h.size() + 1;
  const bool hasEmbed = first == 0, hasHead = end == head + 1;
  auto transformer = std::make_shared<torch::nn::Module>();
  if (hasEmbed || (hasHead && !parts.lmHead)) transformer->register_module("wte", parts.wte);
  if (hasEmbed) {
    transformer->register_module("wpe", parts.wpe);
    transformer->register_module("drop", parts.drop);
  }
  const size_t from = std::max<size_t>(first, 1), to = std::min(end, head);
  if (from < to) {
    auto h = std::make_shared<torch::nn::Module>();
    for (size_t b = from; b < to; ++b) h->register_module(std::to_string(b - 1), parts.h[b - 1]);
    transformer->register_module("h", h);
  }
  if (hasHead) transformer->register_module("ln_f", parts.lnF);
  owner.register_module("transformer", transformer);
  if (hasHead && parts.lmHead) owner.register_module("lm_head", parts.lmHead);
}

// Blocks [first, end) of a gpt as a module of their own, on the network's modules.
class GptRange : public BlockRange {
 public:
  GptRange(GptParts parts, size_t first, size_t end) : parts_(std::move(parts)), first_(first), end_(end) {
    registerParts(*this, parts_, first, end);
  }
  at::Tensor forward(const at::Tensor& x) override { return runGptBlocks(parts_, first_, end_, x); }

 private:
  GptParts parts_;
  size_t first_;
  size_t end_;
};

BlockInfo blockInfo(std::string name, std::string kind, int64_t parameters, int64_t flops, int64_t activations,
                    std::vector<int64_t> shape) {
  BlockInfo info;
  info.name = std::move(name);
  info.kind = std::move(kind);
  info.parameters = parameters;
  info.flopsPerSample = flops;
  info.outputElementsPerSample = shape.at(0) * shape.at(1);
  info.outputShape = std::move(shape);
  info.memoryPerSampleBytes = ShapeTracker::trainingBytes(activations);
  return info;
}

}  // namespace

Gpt::Gpt(const ModelOptions& options) : config_(configFrom(options)) {
  const int64_t c = config_.embed;
  parts_.wte = torch::nn::Embedding(config_.vocab, c);
  parts_.wpe = torch::nn::Embedding(config_.context, c);
  parts_.drop = torch::nn::Dropout(config_.dropout);
  for (int64_t i = 0; i < config_.layers; ++i) parts_.h.push_back(std::make_shared<GptBlock>(config_));
  parts_.lnF = torch::nn::LayerNorm(torch::nn::LayerNormOptions({c}));
  registerParts(*this, parts_, 0, parts_.h.size() + 2);
  initGptWeights(*this, config_.layers);
}

at::Tensor runGptBlocks(GptParts& parts, size_t first, size_t end, at::Tensor x) {
  const size_t head = parts.h.size() + 1;
  for (size_t b = first; b < end; ++b) {
    if (b == 0)
      x = embedTokens(parts.wte, parts.wpe, parts.drop, x);
    else if (b < head)
      x = parts.h[b - 1]->forward(x);
    else
      x = headLogits(parts.lnF, parts.lmHead ? parts.lmHead->named_parameters()["weight"] : parts.wte->weight, x);
  }
  return x;
}

at::Tensor Gpt::forward(const at::Tensor& tokens) { return runGptBlocks(parts_, 0, parts_.h.size() + 2, tokens); }

std::vector<BlockInfo> Gpt::blocks() const {
  const int64_t t = config_.context, c = config_.embed, v = config_.vocab;
  std::vector<BlockInfo> infos;
  infos.push_back(blockInfo("embed", "embedding", numelOf(*parts_.wte) + numelOf(*parts_.wpe), 0, t * c, {t, c}));
  for (size_t i = 0; i < parts_.h.size(); ++i)
    infos.push_back(blockInfo(fmt::format("block{}", i + 1), "transformer", numelOf(*parts_.h[i]),
                              24 * t * c * c + 4 * t * t * c, 10 * t * c + config_.heads * t * t, {t, c}));
  const int64_t headParameters = numelOf(*parts_.lnF) + (parts_.lmHead ? numelOf(*parts_.lmHead) : 0);
  infos.push_back(blockInfo("head", "head", headParameters, 2 * t * c * v, t * v, {t, v}));
  return infos;
}

std::shared_ptr<BlockRange> Gpt::blockRange(size_t first, size_t end) {
  requireSpan(first, end, parts_.h.size() + 2);
  return std::make_shared<GptRange>(parts_, first, end);
}

void Gpt::untieHead() {
  if (!tied()) return;
  auto head = std::make_shared<torch::nn::Module>();
  head->register_parameter("weight", parts_.wte->weight.detach().clone());
  parts_.lmHead = register_module("lm_head", head);
}

BuiltModel buildGpt(const ModelOptions& options) {
  BuiltModel built;
  built.net = std::make_shared<Gpt>(options);
  built.info.name = options.name;
  built.info.parameters = numelOf(*built.net);
  for (const BlockInfo& b : built.net->blocks()) {
    built.info.flopsPerSample += b.flopsPerSample;
    built.info.memoryPerSampleBytes += b.memoryPerSampleBytes;
  }
  built.info.hasBatchNorm = false;
  return built;
}

}  // namespace balancenet::models

// ModelZoo: builds the named models (cnn, mlp, alexnet, vgg16, resnet18, resnet50, gpt) with their size and cost.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "balancenet/core/FieldList.h"
#include "balancenet/models/BatchNormFactory.h"
#include "balancenet/models/LinearFactory.h"
#include "balancenet/models/Network.h"

namespace balancenet::models {

struct ModelOptions {
  std::string name;
  // What the data gives (data::DatasetSpec): the per-sample input, {C,H,W} for images or {T} for token
  // windows, and the width of the output: classes (logits per sample), the vocabulary (logits per token)
  // or the regression targets.
  std::vector<int64_t> inputShape = {1, 28, 28};
  bool tokenInput = false;  // int64 token ids [N,T] (inputShape {T}), else float32 [N, inputShape...]
  int64_t outputs = 10;
  // gpt: transformer blocks, attention heads and embedding width (its context is inputShape[0]).
  int64_t layers = 6;
  int64_t heads = 6;
  int64_t embed = 384;
  // Scales channels and hidden sizes: round(base * width), at least 1. The 10 logits never scale.
  double width = 1.0;
  // < 0: the model's own default; 0 disables dropout (tests need deterministic models); otherwise
  // the probability for every dropout layer of the model. Must be < 1.
  double dropout = -1;
  // Every BN layer of every model is created through this (see BatchNormFactory.h).
  BatchNormFactory batchNorm;
  // Every fully connected layer of every model is created through this (see LinearFactory.h).
  LinearFactory linear;

  int64_t scaled(int64_t base) const;
  // One sample's output: {outputs}, or {T, outputs} (logits per token) for token inputs.
  std::vector<int64_t> outputShape() const;
  // n samples shaped as the data gives them: zeros (float), or token ids ramping 0, 1, ... mod outputs.
  at::Tensor probeBatch(int64_t n) const;
  double dropoutOr(double modelDefault) const;

  // The fields a launcher sends its workers (core/FieldList.h), all but batchNorm and linear, the layer factories
  // each worker sets for its comm mode (worker/WorkerSetup.h).
  static constexpr std::size_t kLocalFields = 2;
  BALANCENET_FIELDS(name, inputShape, tokenInput, outputs, layers, heads, embed, width, dropout);
};
BALANCENET_CHECK_FIELDS(ModelOptions);

struct ModelInfo {
  std::string name;
  int64_t parameters = 0;  // sum of numel over net->parameters()
  // Forward FLOPs per sample: 2 per multiply-add of convs and linears; BN, pooling, activations,
  // biases and residual adds are not counted (see ShapeTracker.h).
  int64_t flopsPerSample = 0;
  bool hasBatchNorm = false;  // whether building called the BatchNorm factory
  // Training memory one more sample costs, estimated from the tracked activations (ShapeTracker::
  // trainingBytes: float32, x2 for BatchNorm/activation outputs, x2 for gradients). Generous on purpose.
  int64_t memoryPerSampleBytes = 0;
};

struct BuiltModel {
  std::shared_ptr<Network> net;
  ModelInfo info;
};

// Throws balancenet::UsageError for an unknown name, width <= 0 (or not finite) or dropout >= 1.
BuiltModel buildModel(const ModelOptions& options);

// In the order of the --model help text.
std::vector<std::string> modelNames();

// Whether the zoo model `name` takes token windows (gpt) rather than images or features.
bool takesTokens(const std::string& name);

// The samples tables and plans assume when no data is given: Fashion-MNIST's (ModelOptions' defaults), and
// for a token model a character-level text (vocabulary 256) in windows of kDefaultContext tokens.
inline constexpr int64_t kDefaultContext = 256;
void assumeDefaultSamples(ModelOptions& options);

}  // namespace balancenet::models

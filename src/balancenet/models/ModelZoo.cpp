// ModelZoo: the name -> model registry, option checks and the ModelInfo of each built model.
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/ScriptedNetwork.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/models/AlexNet.h"
#include "balancenet/models/Cnn.h"
#include "balancenet/models/Gpt.h"
#include "balancenet/models/LayerBuilder.h"
#include "balancenet/models/Mlp.h"
#include "balancenet/models/ResNet.h"
#include "balancenet/models/ShapeTracker.h"
#include "balancenet/models/Vgg16.h"

namespace balancenet::models {

namespace {

using Constructor = std::function<std::shared_ptr<Network>(const ModelOptions&, ShapeTracker&)>;

// What a model can take: images [C,H,W] (conv models), any float features (mlp flattens them), tokens.
enum class Takes { Images, Features, Tokens };

struct Entry {
  std::string name;
  Takes takes;
  Constructor make;
};

template <typename Model, typename... Extra>
Constructor constructor(Extra... extra) {
  return [=](const ModelOptions& options, ShapeTracker& tracker) -> std::shared_ptr<Network> {
    return std::make_shared<Model>(options, tracker, extra...);
  };
}

// The one list of models: names, help text and construction all come from here.
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"cnn", Takes::Images, constructor<Cnn>()},
      {"mlp", Takes::Features, constructor<Mlp>()},
      {"alexnet", Takes::Images, constructor<AlexNet>()},
      {"vgg16", Takes::Images, constructor<Vgg16>()},
      {"resnet18", Takes::Images, constructor<ResNet>(ResNetLayout::resnet18())},
      {"resnet50", Takes::Images, constructor<ResNet>(ResNetLayout::resnet50())},
      {"gpt", Takes::Tokens, nullptr},  // a token model: buildGpt() builds it, without the image ShapeTracker
  };
  return entries;
}

std::string joinedNames() { return fmt::format("{}", fmt::join(modelNames(), ", ")); }

void validate(const ModelOptions& options) {
  if (!(options.width > 0) || !std::isfinite(options.width))
    throw UsageError(fmt::format("--width must be a positive number, got {}", options.width));
  if (!(options.dropout < 1)) throw UsageError(fmt::format("--dropout must be below 1, got {}", options.dropout));
}

std::string shapeText(const ModelOptions& options) {
  return fmt::format("[{}]{}", fmt::join(options.inputShape, ","), options.tokenInput ? " token windows" : "");
}

// The data's samples must be what the model takes: one line naming both, before anything is built.
void requireInputFits(const Entry& entry, const ModelOptions& options) {
  if (options.inputShape.empty() || options.outputs < 1)
    throw UsageError(fmt::format("--model {}: the data gives samples {} and {} outputs (classes or vocabulary)",
                                 entry.name, shapeText(options), options.outputs));
  if (entry.takes == Takes::Tokens && !options.tokenInput)
    throw UsageError(fmt::format("--model {} takes token windows; the data gives samples {} (use tokens: or text:)",
                                 entry.name, shapeText(options)));
  if (entry.takes != Takes::Tokens && options.tokenInput)
    throw UsageError(fmt::format("--model {} takes {}; the data gives {} (use --model gpt)", entry.name,
                                 entry.takes == Takes::Images ? "images" : "features", shapeText(options)));
  if (entry.takes == Takes::Images && options.inputShape.size() != 3)
    throw UsageError(
        fmt::format("--model {} takes images [C,H,W]; the data gives samples {} (use --model mlp, or "
                    "save them as [N,C,H,W])",
                    entry.name, shapeText(options)));
}

// The tracker's start: an image as it is, [H,W] as one channel, anything else as flat features.
ShapeTracker trackerFor(const std::vector<int64_t>& shape) {
  if (shape.size() == 3) return ShapeTracker(shape[0], shape[1], shape[2]);
  if (shape.size() == 2) return ShapeTracker(1, shape[0], shape[1]);
  int64_t features = 1;
  for (int64_t d : shape) features *= d;
  return ShapeTracker(features, 1, 1);
}

int64_t parameterCount(const Network& net) {
  int64_t total = 0;
  for (const at::Tensor& p : net.parameters()) total += p.numel();
  return total;
}

}  // namespace

int64_t ModelOptions::scaled(int64_t base) const {
  return std::max<int64_t>(1, std::llround(static_cast<double>(base) * width));
}

std::vector<int64_t> ModelOptions::outputShape() const {
  if (tokenInput) return {inputShape.at(0), outputs};
  return {outputs};
}

at::Tensor ModelOptions::probeBatch(int64_t n) const {
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), inputShape.begin(), inputShape.end());
  if (!tokenInput) return at::zeros(shape);
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  return at::arange(elements, at::kLong).remainder_(std::max<int64_t>(outputs, 1)).reshape(shape);
}

double ModelOptions::dropoutOr(double modelDefault) const { return dropout < 0 ? modelDefault : dropout; }

std::vector<std::string> modelNames() {
  std::vector<std::string> names;
  for (const Entry& entry : registry()) names.push_back(entry.name);
  return names;
}

void assumeDefaultSamples(ModelOptions& options) {
  if (!takesTokens(options.name)) return;
  options.tokenInput = true;
  options.inputShape = {kDefaultContext};
  options.outputs = 256;
}

bool takesTokens(const std::string& name) {
  for (const Entry& entry : registry())
    if (entry.name == name) return entry.takes == Takes::Tokens;
  return false;
}

namespace {

// A scripted model's FLOPs are not tracked: 2 per parameter per sample, exact for fully connected
// layers and low for convolutions, is what the orchestrator's ops/s measure then uses (it compares
// nodes, so a constant factor cancels). Memory per sample is unknown: no memory cap.
BuiltModel buildScripted(const ModelOptions& options) {
  BuiltModel built;
  built.net = std::make_shared<ScriptedNetwork>(options.name, options);
  built.info.name = options.name;
  built.info.parameters = parameterCount(*built.net);
  built.info.flopsPerSample = 2 * built.info.parameters;
  for (const auto& b : built.net->named_buffers())
    if (b.key().find("running_mean") != std::string::npos) built.info.hasBatchNorm = true;
  return built;
}

}  // namespace

BuiltModel buildModel(const ModelOptions& options) {
  if (isScriptedModelPath(options.name)) return buildScripted(options);
  const auto entry =
      std::find_if(registry().begin(), registry().end(), [&](const Entry& e) { return e.name == options.name; });
  if (entry == registry().end())
    throw UsageError(fmt::format("unknown --model '{}'; choose one of: {}", options.name, joinedNames()));
  validate(options);
  requireInputFits(*entry, options);
  if (entry->takes == Takes::Tokens) return buildGpt(options);

  // hasBatchNorm is observed rather than declared: counting factory calls cannot disagree with the model.
  int64_t batchNormLayers = 0;
  ModelOptions counted = options;
  counted.batchNorm = [&batchNormLayers, factory = options.batchNorm](int64_t channels) {
    ++batchNormLayers;
    return LayerBuilder::makeBatchNorm(factory, channels);
  };

  ShapeTracker tracker = trackerFor(options.inputShape);
  BuiltModel built;
  try {
    built.net = entry->make(counted, tracker);
  } catch (const std::logic_error& e) {  // a layer that does not fit: the images are too small for it
    throw UsageError(fmt::format("--model {} does not fit samples {}: {}", options.name, shapeText(options), e.what()));
  }
  if (!tracker.flattened() || tracker.channels() != options.outputs)
    throw std::logic_error(
        fmt::format("model '{}' ends in {} instead of {} outputs", options.name, tracker.str(), options.outputs));
  built.info.name = options.name;
  built.info.parameters = parameterCount(*built.net);
  built.info.flopsPerSample = tracker.flops();
  built.info.memoryPerSampleBytes = ShapeTracker::trainingBytes(tracker.activations());
  built.info.hasBatchNorm = batchNormLayers > 0;
  return built;
}

}  // namespace balancenet::models

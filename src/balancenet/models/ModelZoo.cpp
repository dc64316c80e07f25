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

struct Entry {
  std::string name;
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
      {"cnn", constructor<Cnn>()},
      {"mlp", constructor<Mlp>()},
      {"alexnet", constructor<AlexNet>()},
      {"vgg16", constructor<Vgg16>()},
      {"resnet18", constructor<ResNet>(ResNetLayout::resnet18())},
      {"resnet50", constructor<ResNet>(ResNetLayout::resnet50())},
      {"gpt", nullptr},  // a token model: buildGpt() builds it, without the image ShapeTracker
  };
  return entries;
}

std::string joinedNames() { return fmt::format("{}", fmt::join(modelNames(), ", ")); }

void validate(const ModelOptions& options) {
  if (!(options.width > 0) || !std::isfinite(options.width))
    throw UsageError(fmt::format("--width must be a positive number, got {}", options.width));
  if (!(options.dropout < 1)) throw UsageError(fmt::format("--dropout must be below 1, got {}", options.dropout));
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

double ModelOptions::dropoutOr(double modelDefault) const { return dropout < 0 ? modelDefault : dropout; }

std::vector<std::string> modelNames() {
  std::vector<std::string> names;
  for (const Entry& entry : registry()) names.push_back(entry.name);
  return names;
}

namespace {

// A scripted model's FLOPs are not tracked: 2 per parameter per sample, exact for fully connected
// layers and low for convolutions, is what the orchestrator's ops/s measure then uses (it compares
// nodes, so a constant factor cancels). Memory per sample is unknown: no memory cap.
BuiltModel buildScripted(const ModelOptions& options) {
  BuiltModel built;
  built.net = std::make_shared<ScriptedNetwork>(options.name);
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
  if (options.name == "gpt") return buildGpt(options);

  // hasBatchNorm is observed rather than declared: counting factory calls cannot disagree with the model.
  int64_t batchNormLayers = 0;
  ModelOptions counted = options;
  counted.batchNorm = [&batchNormLayers, factory = options.batchNorm](int64_t channels) {
    ++batchNormLayers;
    return LayerBuilder::makeBatchNorm(factory, channels);
  };

  ShapeTracker tracker(Network::kInputChannels, Network::kInputSize, Network::kInputSize);
  BuiltModel built;
  built.net = entry->make(counted, tracker);
  if (!tracker.flattened() || tracker.channels() != Network::kNumClasses)
    throw std::logic_error(
        fmt::format("model '{}' ends in {} instead of {} logits", options.name, tracker.str(), Network::kNumClasses));
  built.info.name = options.name;
  built.info.parameters = parameterCount(*built.net);
  built.info.flopsPerSample = tracker.flops();
  built.info.memoryPerSampleBytes = ShapeTracker::trainingBytes(tracker.activations());
  built.info.hasBatchNorm = batchNormLayers > 0;
  return built;
}

}  // namespace balancenet::models

// LayerBuilder: the torch layers behind each builder call, with the matching ShapeTracker update.
#include "balancenet/models/LayerBuilder.h"

#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/padding.h>
#include <torch/nn/modules/pooling.h>

namespace balancenet::models {

namespace nn = torch::nn;

LayerBuilder::LayerBuilder(ShapeTracker& tracker, BatchNormFactory batchNorm, LinearFactory linear)
    : tracker_(tracker),
      batchNorm_(std::move(batchNorm)),
      linear_(std::move(linear)),
      flopsStart_(tracker.flops()),
      activationsStart_(tracker.activations()) {}

void LayerBuilder::record(const char* startsKind, std::string name) {
  if (startsKind != nullptr) {
    Span span;
    // Layers before the first block (a leading flatten or padding) belong to it.
    span.block.firstLayer = spans_.empty() ? 0 : layers_->size() - 1;
    span.block.info.kind = startsKind;
    span.block.info.name = std::move(name);
    spans_.push_back(std::move(span));
  }
  if (spans_.empty()) return;  // a leading layer: the first block will take it
  Span& current = spans_.back();
  current.block.endLayer = layers_->size();
  current.flopsEnd = tracker_.flops();
  current.activationsEnd = tracker_.activations();
  current.block.info.outputShape = tracker_.flattened()
                                       ? std::vector<int64_t>{tracker_.channels()}
                                       : std::vector<int64_t>{tracker_.channels(), tracker_.height(), tracker_.width()};
  current.block.info.outputElementsPerSample = tracker_.features();
}

LayerBuilder& LayerBuilder::nameBlock(std::string name) {
  if (spans_.empty()) throw std::logic_error("LayerBuilder: nameBlock before the first block");
  spans_.back().block.info.name = std::move(name);
  return *this;
}

std::vector<LayerBlock> LayerBuilder::blocks() const {
  std::vector<LayerBlock> result;
  std::set<std::string> names;
  int64_t flopsBefore = flopsStart_;
  int64_t activationsBefore = activationsStart_;
  for (const Span& span : spans_) {
    LayerBlock block = span.block;
    if (!names.insert(block.info.name).second)
      throw std::logic_error(fmt::format("LayerBuilder: two blocks named '{}'", block.info.name));
    for (size_t i = block.firstLayer; i < block.endLayer; ++i)
      for (const at::Tensor& p : layers_->ptr(i)->parameters()) block.info.parameters += p.numel();
    block.info.flopsPerSample = span.flopsEnd - flopsBefore;
    block.info.memoryPerSampleBytes = ShapeTracker::trainingBytes(span.activationsEnd - activationsBefore);
    flopsBefore = span.flopsEnd;
    activationsBefore = span.activationsEnd;
    result.push_back(std::move(block));
  }
  return result;
}

nn::AnyModule LayerBuilder::makeBatchNorm(const BatchNormFactory& factory, int64_t channels) {
  if (!factory) return nn::AnyModule(nn::BatchNorm2d(channels));
  nn::AnyModule layer = factory(channels);
  if (layer.is_empty()) throw std::logic_error("BatchNorm factory returned an empty module");
  return layer;
}

LayerBuilder& LayerBuilder::conv(int64_t outChannels, int64_t kernel, int64_t stride, int64_t pad, bool bias) {
  const int64_t in = tracker_.channels();
  tracker_.conv(outChannels, kernel, stride, pad);  // first: it rejects a kernel that does not fit
  layers_->push_back(nn::Conv2d(nn::Conv2dOptions(in, outChannels, kernel).stride(stride).padding(pad).bias(bias)));
  record("conv", fmt::format("conv{}", ++convs_));
  return *this;
}

LayerBuilder& LayerBuilder::convBnRelu(int64_t outChannels, int64_t kernel, int64_t stride, int64_t pad) {
  return conv(outChannels, kernel, stride, pad, /*bias=*/false).batchNorm().relu();
}

LayerBuilder& LayerBuilder::batchNorm() {
  if (tracker_.flattened()) throw std::logic_error("LayerBuilder: BatchNorm2d after flatten");
  layers_->push_back(makeBatchNorm(batchNorm_, tracker_.channels()));
  record();
  return *this;
}

LayerBuilder& LayerBuilder::relu() {
  layers_->push_back(nn::ReLU());
  record();
  return *this;
}

LayerBuilder& LayerBuilder::maxPool(int64_t kernel, int64_t stride, int64_t pad) {
  tracker_.pool(kernel, stride, pad);
  layers_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(kernel).stride(stride).padding(pad)));
  record();
  return *this;
}

LayerBuilder& LayerBuilder::adaptiveAvgPool(int64_t side) {
  tracker_.adaptivePool(side);
  layers_->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(side)));
  record();
  return *this;
}

LayerBuilder& LayerBuilder::zeroPad(int64_t pad) {
  tracker_.pad(pad);
  layers_->push_back(nn::ZeroPad2d(nn::ZeroPad2dOptions(pad)));
  record();
  return *this;
}

LayerBuilder& LayerBuilder::globalAvgPool() {
  tracker_.globalPool();
  layers_->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  record();
  return *this;
}

LayerBuilder& LayerBuilder::flatten() {
  tracker_.flatten();
  layers_->push_back(nn::Flatten());
  record();
  return *this;
}

LayerBuilder& LayerBuilder::linear(int64_t outFeatures) {
  const int64_t in = tracker_.channels();
  tracker_.linear(outFeatures);
  nn::AnyModule layer = linear_ ? linear_(in, outFeatures) : nn::AnyModule(nn::Linear(in, outFeatures));
  if (layer.is_empty()) throw std::logic_error("Linear factory returned an empty module");
  layers_->push_back(std::move(layer));
  record("linear", fmt::format("fc{}", ++linears_));
  return *this;
}

LayerBuilder& LayerBuilder::dropout(double p) {
  if (p < 0 || p >= 1) throw std::logic_error("LayerBuilder: dropout outside [0,1)");
  if (p > 0) {
    layers_->push_back(nn::Dropout(p));
    record();
  }
  return *this;
}

LayerBuilder& LayerBuilder::module(nn::AnyModule layer, std::string blockName, std::string kind) {
  layers_->push_back(std::move(layer));
  record(kind.c_str(), std::move(blockName));
  return *this;
}

}  // namespace balancenet::models

// LayerBuilder: the torch layers behind each builder call, with the matching ShapeTracker update.
#include "balancenet/models/LayerBuilder.h"

#include <stdexcept>
#include <utility>

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
    : tracker_(tracker), batchNorm_(std::move(batchNorm)), linear_(std::move(linear)) {}

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
  return *this;
}

LayerBuilder& LayerBuilder::convBnRelu(int64_t outChannels, int64_t kernel, int64_t stride, int64_t pad) {
  return conv(outChannels, kernel, stride, pad, /*bias=*/false).batchNorm().relu();
}

LayerBuilder& LayerBuilder::batchNorm() {
  if (tracker_.flattened()) throw std::logic_error("LayerBuilder: BatchNorm2d after flatten");
  layers_->push_back(makeBatchNorm(batchNorm_, tracker_.channels()));
  return *this;
}

LayerBuilder& LayerBuilder::relu() {
  layers_->push_back(nn::ReLU());
  return *this;
}

LayerBuilder& LayerBuilder::maxPool(int64_t kernel, int64_t stride) {
  tracker_.pool(kernel, stride);
  layers_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(kernel).stride(stride)));
  return *this;
}

LayerBuilder& LayerBuilder::zeroPad(int64_t pad) {
  tracker_.pad(pad);
  layers_->push_back(nn::ZeroPad2d(nn::ZeroPad2dOptions(pad)));
  return *this;
}

LayerBuilder& LayerBuilder::globalAvgPool() {
  tracker_.globalPool();
  layers_->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  return *this;
}

LayerBuilder& LayerBuilder::flatten() {
  tracker_.flatten();
  layers_->push_back(nn::Flatten());
  return *this;
}

LayerBuilder& LayerBuilder::linear(int64_t outFeatures) {
  const int64_t in = tracker_.channels();
  tracker_.linear(outFeatures);
  if (!linear_) {
    layers_->push_back(nn::Linear(in, outFeatures));
    return *this;
  }
  nn::AnyModule layer = linear_(in, outFeatures);
  if (layer.is_empty()) throw std::logic_error("Linear factory returned an empty module");
  layers_->push_back(std::move(layer));
  return *this;
}

LayerBuilder& LayerBuilder::dropout(double p) {
  if (p < 0 || p >= 1) throw std::logic_error("LayerBuilder: dropout outside [0,1)");
  if (p > 0) layers_->push_back(nn::Dropout(p));
  return *this;
}

LayerBuilder& LayerBuilder::module(nn::AnyModule layer) {
  layers_->push_back(std::move(layer));
  return *this;
}

}  // namespace balancenet::models

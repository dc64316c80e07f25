// ShapeTracker: shape propagation and FLOP counting for the layers a model builds.
#include "balancenet/models/ShapeTracker.h"

#include <stdexcept>

#include <fmt/format.h>

namespace balancenet::models {

ShapeTracker::ShapeTracker(int64_t channels, int64_t height, int64_t width)
    : channels_(channels), height_(height), width_(width) {
  if (channels < 1 || height < 1 || width < 1)
    throw std::logic_error(fmt::format("ShapeTracker: invalid shape {}x{}x{}", channels, height, width));
}

bool ShapeTracker::sameShape(const ShapeTracker& other) const {
  return channels_ == other.channels_ && height_ == other.height_ && width_ == other.width_ &&
         flattened_ == other.flattened_;
}

std::string ShapeTracker::str() const {
  if (flattened_) return std::to_string(channels_);
  return fmt::format("{}x{}x{}", channels_, height_, width_);
}

void ShapeTracker::requireSpatial(const char* layer) const {
  if (flattened_) throw std::logic_error(fmt::format("ShapeTracker: {} after flatten", layer));
}

int64_t ShapeTracker::outputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, const char* layer) {
  if (kernel < 1 || stride < 1 || pad < 0)
    throw std::logic_error(fmt::format("ShapeTracker: bad {} kernel {} stride {} pad {}", layer, kernel, stride, pad));
  const int64_t span = in + 2 * pad - kernel;
  // A model that pools a map away to nothing is a bug in the model, not in the user's flags.
  if (span < 0)
    throw std::logic_error(fmt::format("ShapeTracker: {} kernel {} does not fit a {}-pixel map", layer, kernel, in));
  return span / stride + 1;
}

void ShapeTracker::conv(int64_t outChannels, int64_t kernel, int64_t stride, int64_t pad) {
  requireSpatial("conv");
  if (outChannels < 1) throw std::logic_error("ShapeTracker: conv needs at least one output channel");
  const int64_t h = outputSize(height_, kernel, stride, pad, "conv");
  const int64_t w = outputSize(width_, kernel, stride, pad, "conv");
  flops_ += 2 * channels_ * kernel * kernel * outChannels * h * w;
  channels_ = outChannels;
  height_ = h;
  width_ = w;
  activations_ += features();
}

void ShapeTracker::pool(int64_t kernel, int64_t stride, int64_t pad) {
  requireSpatial("pool");
  height_ = outputSize(height_, kernel, stride, pad, "pool");
  width_ = outputSize(width_, kernel, stride, pad, "pool");
  activations_ += features();
}

void ShapeTracker::pad(int64_t pad) {
  requireSpatial("pad");
  if (pad < 0) throw std::logic_error("ShapeTracker: negative padding");
  height_ += 2 * pad;
  width_ += 2 * pad;
  activations_ += features();
}

void ShapeTracker::globalPool() { adaptivePool(1); }

void ShapeTracker::adaptivePool(int64_t side) {
  requireSpatial("adaptive pool");
  if (side < 1) throw std::logic_error("ShapeTracker: adaptive pool to a side below 1");
  height_ = side;
  width_ = side;
}

void ShapeTracker::flatten() {
  requireSpatial("flatten");
  channels_ = features();
  height_ = 1;
  width_ = 1;
  flattened_ = true;
}

void ShapeTracker::linear(int64_t outFeatures) {
  if (!flattened_) throw std::logic_error("ShapeTracker: linear before flatten");
  if (outFeatures < 1) throw std::logic_error("ShapeTracker: linear needs at least one output");
  flops_ += 2 * channels_ * outFeatures;
  channels_ = outFeatures;
  activations_ += features();
}

ShapeTracker ShapeTracker::fork() const {
  ShapeTracker branch = *this;
  branch.flops_ = 0;
  branch.activations_ = 0;
  return branch;
}

void ShapeTracker::join(const ShapeTracker& branchA, const ShapeTracker& branchB) {
  if (!branchA.sameShape(branchB))
    throw std::logic_error(
        fmt::format("ShapeTracker: residual branches end in {} and {}", branchA.str(), branchB.str()));
  channels_ = branchA.channels_;
  height_ = branchA.height_;
  width_ = branchA.width_;
  flattened_ = branchA.flattened_;
  flops_ += branchA.flops_ + branchB.flops_;
  activations_ += branchA.activations_ + branchB.activations_;
}

}  // namespace balancenet::models

// ShapeTracker: the activation shape a model has reached while its layers are built, plus their FLOPs.
#pragma once
#include <cstdint>
#include <string>

namespace balancenet::models {

// Model constructors move this along as they add layers and size each layer from it, so the FLOP count
// and the layers that are actually built come from the same numbers and cannot drift apart.
//
// FLOP convention: 2 per multiply-add of convolutions and linear layers (weights only). Biases, BatchNorm,
// activations, pooling, padding and residual additions are not counted: they are O(activations), a
// rounding error next to the O(activations * fan-in) of the layers that are.
class ShapeTracker {
 public:
  ShapeTracker(int64_t channels, int64_t height, int64_t width);

  int64_t channels() const { return channels_; }  // after flatten(): the feature count
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  bool flattened() const { return flattened_; }
  int64_t features() const { return channels_ * height_ * width_; }  // elements per sample
  int64_t flops() const { return flops_; }
  // Output elements of every conv, pool, pad and linear layer so far: what a forward keeps for backward
  // (BatchNorm and activations keep about as much again; see ModelInfo::memoryPerSampleBytes).
  int64_t activations() const { return activations_; }
  // Training memory of `activations` elements per sample: float32, x2 for the BatchNorm/activation
  // outputs kept beside them, x2 for their gradients in backward. Generous on purpose (memory caps).
  static int64_t trainingBytes(int64_t activations) { return activations * int64_t{4} * 2 * 2; }
  bool sameShape(const ShapeTracker& other) const;
  std::string str() const;  // "64x14x14", or "10" once flattened

  // Square kernels; each throws std::logic_error where the layer does not fit the current shape.
  void conv(int64_t outChannels, int64_t kernel, int64_t stride = 1, int64_t pad = 0);
  void pool(int64_t kernel, int64_t stride, int64_t pad = 0);  // max or average, 0 FLOPs
  void pad(int64_t pad);                                       // zero padding on every side
  void globalPool();                                           // adaptive pool to 1x1
  void adaptivePool(int64_t side);                             // adaptive pool to side x side
  void flatten();
  void linear(int64_t outFeatures);

  // Residual blocks: each branch is built on a fork (same shape, no FLOPs yet); join() checks that both
  // branches end in the same shape, takes it and adds both branches' FLOPs.
  ShapeTracker fork() const;
  void join(const ShapeTracker& branchA, const ShapeTracker& branchB);

 private:
  void requireSpatial(const char* layer) const;
  static int64_t outputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, const char* layer);

  int64_t channels_;
  int64_t height_;
  int64_t width_;
  bool flattened_ = false;
  int64_t flops_ = 0;
  int64_t activations_ = 0;
};

}  // namespace balancenet::models

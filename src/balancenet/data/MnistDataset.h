// MnistDataset: an MNIST-format dataset (Fashion-MNIST by default) held in memory as normalised tensors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "balancenet/data/DataOptions.h"

namespace balancenet::data {

// Fashion-MNIST pixel statistics after scaling to [0,1].
inline constexpr double kPixelMean = 0.2860;
inline constexpr double kPixelStd = 0.3530;
inline constexpr int64_t kNumClasses = 10;
inline constexpr int64_t kImageSide = 28;  // what every model takes: [N,1,28,28]

struct MnistDataset {
  at::Tensor images;  // float32 [N,1,H,W]: pixels / 255, then (x - kPixelMean) / kPixelStd
  at::Tensor labels;  // int64 [N], each in [0, kNumClasses)

  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
  // The samples at dataset indices `idx`, in that order (index_select along dim 0).
  at::Tensor imagesAt(const std::vector<int64_t>& idx) const;
  at::Tensor labelsAt(const std::vector<int64_t>& idx) const;
};

// Loads the training set (train-*) or the test set (t10k-*) from `dir`, taking each of
// <prefix>-images-idx3-ubyte and <prefix>-labels-idx1-ubyte plain or with .gz. Throws UsageError with
// one line if a file is missing or malformed, the counts differ or a label is not in 0..9.
MnistDataset loadMnist(const std::string& dir, bool train);

// Throws UsageError naming `dir` unless the images are kImageSide x kImageSide, the models' input (a
// dataset of other images is valid IDX, but would fail deep inside the first forward pass).
void requireModelImageSize(const MnistDataset& ds, const std::string& dir);

}  // namespace balancenet::data

// MnistDataset: finds, validates and normalises the IDX image and label files of one split.
#include "balancenet/data/MnistDataset.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/IdxSplit.h"

namespace balancenet::data {

namespace {

at::Tensor indexTensor(const std::vector<int64_t>& idx) {
  return at::tensor(at::ArrayRef<int64_t>(idx), at::TensorOptions().dtype(at::kLong));
}

}  // namespace

at::Tensor MnistDataset::imagesAt(const std::vector<int64_t>& idx) const {
  return images.index_select(0, indexTensor(idx));
}

at::Tensor MnistDataset::labelsAt(const std::vector<int64_t>& idx) const {
  return labels.index_select(0, indexTensor(idx));
}

MnistDataset loadMnist(const std::string& dir, bool train) {
  IdxSplit split = readIdxSplit(dir, train, "--data-dir " + dir);
  IdxArray& images = split.images;
  IdxArray& labels = split.labels;
  const int64_t n = images.dims[0];
  const std::string& labelPath = split.labelPath;
  auto bad = std::find_if(labels.data.begin(), labels.data.end(), [](uint8_t l) { return l >= kNumClasses; });
  if (bad != labels.data.end())
    throw UsageError(fmt::format("{}: label {} of sample {} is out of range 0..{}", labelPath, int{*bad},
                                 bad - labels.data.begin(), kNumClasses - 1));

  MnistDataset out;
  // from_blob borrows the vectors; the conversions below copy before they go out of scope.
  const int64_t h = images.dims[1], w = images.dims[2];
  out.images = at::from_blob(images.data.data(), {n, 1, h, w}, at::TensorOptions().dtype(at::kByte))
                   .to(at::kFloat)
                   .div_(255.0)
                   .sub_(kPixelMean)
                   .div_(kPixelStd);
  out.labels = at::from_blob(labels.data.data(), {n}, at::TensorOptions().dtype(at::kByte)).to(at::kLong);
  return out;
}

void requireModelImageSize(const MnistDataset& ds, const std::string& dir) {
  const int64_t h = ds.images.size(2), w = ds.images.size(3);
  if (h != kImageSide || w != kImageSide)
    throw UsageError(fmt::format("--data-dir {}: the images are {}x{} pixels, but the models take {}x{}", dir, h, w,
                                 kImageSide, kImageSide));
}

}  // namespace balancenet::data

// IdxDataset: both splits read with readIdxSplit, checked against each other and normalised.
#include "balancenet/data/IdxDataset.h"

#include <ATen/ATen.h>

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/IdxSplit.h"
#include "balancenet/data/LabelledImages.h"
#include "balancenet/data/SourceKey.h"

namespace balancenet::data {

namespace {

// from_blob borrows the vectors; clone() and to() copy before they go out of scope.
LabelledImages idxTensors(IdxSplit& s) {
  const int64_t n = s.images.dims[0], h = s.images.dims[1], w = s.images.dims[2];
  const auto bytes = at::TensorOptions().dtype(at::kByte);
  return {at::from_blob(s.images.data.data(), {n, 1, h, w}, bytes).clone(),
          at::from_blob(s.labels.data.data(), {n}, bytes).to(at::kLong)};
}

}  // namespace

DatasetPair openIdx(const std::string& dir, const DataOptions& options) {
  const std::string what = "idx:" + dir;
  IdxSplit train = readIdxSplit(dir, /*train=*/true, what);
  IdxSplit test = readIdxSplit(dir, /*train=*/false, what);
  const int64_t h = train.images.dims[1], w = train.images.dims[2];
  if (test.images.dims[1] != h || test.images.dims[2] != w)
    throw UsageError(fmt::format("{}: the test images are {}x{} pixels but the training images ({}) are {}x{}",
                                 test.imagePath, test.images.dims[1], test.images.dims[2], train.imagePath, h, w));
  // Labels are bytes, so the class count is at most 256: no scan of huge ranges needed.
  const int64_t classes = *std::max_element(train.labels.data.begin(), train.labels.data.end()) + 1;
  const auto bad =
      std::find_if(test.labels.data.begin(), test.labels.data.end(), [&](uint8_t l) { return l >= classes; });
  if (bad != test.labels.data.end())
    throw UsageError(fmt::format("{}: label {} of sample {} is not a class of the training set (0..{}, from {})",
                                 test.labelPath, int{*bad}, bad - test.labels.data.begin(), classes - 1,
                                 train.labelPath));

  DatasetSpec spec;
  spec.inputShape = {1, h, w};
  spec.target = TargetKind::Class;
  spec.classes = classes;
  spec.source = options.source;
  // The statistics are a function of the training images alone, so their file is the key.
  return normalizedImagePair(spec, idxTensors(train), idxTensors(test), options, sourceKey("idx", {train.imagePath}));
}

}  // namespace balancenet::data

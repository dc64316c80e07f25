// LabelledImages: uint8 images with class labels, normalised into the two TensorDatasets of an image format.
#pragma once
#include <string>

#include <ATen/core/Tensor.h>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

struct LabelledImages {
  at::Tensor images;  // uint8 [N,C,H,W]
  at::Tensor labels;  // int64 [N]
};

// Both splits normalised with the training images' per-channel statistics (resolveNormalization under
// `cacheKey`: --normalize, the cache, or computed), as TensorDatasets with `spec` (inputShape {C,H,W},
// classes and source filled by the caller).
DatasetPair normalizedImagePair(const DatasetSpec& spec, const LabelledImages& train, const LabelledImages& test,
                                const DataOptions& options, const std::string& cacheKey);

}  // namespace balancenet::data

// Normalization: the per-channel mean and std that image formats subtract and divide by.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/data/DataOptions.h"

namespace balancenet::data {

struct ChannelStats {
  std::vector<double> mean, std;  // one per channel, of pixels scaled to [0,1]
};

// Mean and std per channel of uint8 images [N,C,H,W] scaled to [0,1] (std over all pixels, population).
ChannelStats channelStats(const at::Tensor& imagesUint8);

// The statistics to normalise with: --normalize's when given (one value = every channel; a count other
// than 1 or `channels` is a UsageError), else cached ones from options.cacheDir/normalization-<hash of
// cacheKey>.json, else `compute()` (written to the cache atomically when cacheDir is set). cacheKey should
// name the source and what identifies its contents (paths, sizes, modification times).
ChannelStats resolveNormalization(const DataOptions& options, int64_t channels, const std::string& cacheKey,
                                  const std::function<ChannelStats()>& compute);

// (x / 255 - mean[c]) / std[c] for uint8 images [N,C,H,W]: the float32 inputs the models take.
at::Tensor normalizeImages(const at::Tensor& imagesUint8, const ChannelStats& stats);

}  // namespace balancenet::data

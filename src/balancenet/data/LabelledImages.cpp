// LabelledImages: the statistics of the training images, applied to both splits.
#include "balancenet/data/LabelledImages.h"

#include <ATen/ATen.h>

#include <memory>

#include "balancenet/data/Normalization.h"
#include "balancenet/data/TensorDataset.h"

namespace balancenet::data {

DatasetPair normalizedImagePair(const DatasetSpec& spec, const LabelledImages& train, const LabelledImages& test,
                                const DataOptions& options, const std::string& cacheKey) {
  const ChannelStats stats =
      resolveNormalization(options, train.images.size(1), cacheKey, [&] { return channelStats(train.images); });
  DatasetPair pair;
  pair.train = std::make_shared<TensorDataset>(spec, normalizeImages(train.images, stats), train.labels);
  pair.test = std::make_shared<TensorDataset>(spec, normalizeImages(test.images, stats), test.labels);
  return pair;
}

}  // namespace balancenet::data

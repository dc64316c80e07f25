// MicroBatches: an equal cut of a share, the remainder to the first micro-batches.
#include "balancenet/pipeline/MicroBatches.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {

std::vector<int64_t> microBatchSizes(int64_t share, int micros) {
  // Both come from validated flags and a validated split: a share or count below 1 is the program's fault.
  if (share < 1 || micros < 1)
    throw InternalError(fmt::format("cutting a share of {} samples into {} micro-batches", share, micros));
  const int64_t count = std::min<int64_t>(micros, share);
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < count; ++i) sizes.push_back(share / count + (i < share % count ? 1 : 0));
  return sizes;
}

std::vector<int64_t> microBatchOffsets(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    offsets.push_back(offset);
    offset += size;
  }
  return offsets;
}

}  // namespace balancenet::pipeline

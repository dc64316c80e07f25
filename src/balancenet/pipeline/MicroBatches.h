// MicroBatches: how one column's share of the global batch is cut into micro-batches.
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::pipeline {

// min(micros, share) sizes (a micro-batch is never empty), as equal as possible, the larger first;
// they sum to share. Throws InternalError for share < 1 or micros < 1.
std::vector<int64_t> microBatchSizes(int64_t share, int micros);

// Offsets of each micro-batch within the share (prefix sums of the sizes, starting at 0).
std::vector<int64_t> microBatchOffsets(const std::vector<int64_t>& sizes);

}  // namespace balancenet::pipeline

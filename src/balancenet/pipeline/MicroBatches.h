// MicroBatches: how one column's share of the global batch is cut into micro-batches.
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::pipeline {

// The most micro-batches a step may have (--micro-batches is refused above it): ScheduleRunner::tagFor gives
// each one its own send/recv tags, which stay below the re-partition, evaluation and gathering tags (1 << 27).
constexpr int kMaxMicroBatches = 1 << 24;

// min(micros, share) sizes (a micro-batch is never empty), as equal as possible, the larger first;
// they sum to share. Throws InternalError for share < 1 or micros < 1.
std::vector<int64_t> microBatchSizes(int64_t share, int micros);

// Offsets of each micro-batch within the share (prefix sums of the sizes, starting at 0).
std::vector<int64_t> microBatchOffsets(const std::vector<int64_t>& sizes);

}  // namespace balancenet::pipeline

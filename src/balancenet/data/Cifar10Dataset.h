// Cifar10Dataset: the cifar10:DIR format, CIFAR-10's binary batches.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

inline constexpr int64_t kCifarSide = 32;
inline constexpr int64_t kCifarClasses = 10;
inline constexpr int64_t kCifarRecordBytes = 1 + 3 * kCifarSide * kCifarSide;  // label, R plane, G plane, B plane

// Opens data_batch_1.bin .. data_batch_5.bin (training) and test_batch.bin (held out) from `dir` or from
// dir/cifar-10-batches-bin/ (the archive's folder). Records: 1 label byte, then 1024 red, 1024 green and
// 1024 blue bytes, each plane row-major 32x32. Inputs [N,3,32,32] normalised per channel with the training
// set's statistics (or --normalize). Throws UsageError with one line naming the file for a missing file, a
// size that is not a whole number of records, or a label above 9.
DatasetPair openCifar10(const std::string& dir, const DataOptions& options);

}  // namespace balancenet::data

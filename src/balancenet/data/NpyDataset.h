// NpyDataset: the npy:X.npy,Y.npy format, NumPy arrays of inputs and targets read through mmap.
#pragma once
#include <string>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

// Opens `paths` = "X.npy,Y.npy". X: float32 (as is) or uint8 (divided by 255, nothing else), shape
// [N, ...]; Y: int64 or int32 class labels of shape [N] (classes = the largest + 1), or float32 targets of
// shape [N, ...] with options.regressionTargets. A 1-D X or regression Y counts as [N, 1], so a model's
// [n, 1] output meets a [n, 1] target. The held-out set is the last round(N * valFraction) rows (at least
// one when valFraction > 0; none when it is 0), the training set the rows before. Batches copy only
// their rows out of the mappings. Throws UsageError with one line naming the file for any defect:
// a bad header (NpyFile.h), an unsupported dtype, X and Y of different N, a negative label.
DatasetPair openNpy(const std::string& paths, const DataOptions& options);

}  // namespace balancenet::data

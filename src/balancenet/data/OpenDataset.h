// OpenDataset: the --data source opened as a training and a held-out set, whatever its format.
#pragma once
#include <string>
#include <vector>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

// Opens the source's training and held-out sets. Throws UsageError with one line naming the file for
// any defect found before training: unknown format, missing file, empty class folder, an image whose
// header does not parse, label out of range, X and Y of different lengths, a context longer than the file.
// (A token file's vocabulary is its largest id + 1 rounded up to 64, so no id can exceed it.)
DatasetPair openDataset(const DataOptions& options);

// The formats openDataset knows, for --help: idx, imagefolder, cifar10, npy, tokens, tokens32, text.
std::vector<std::string> formatNames();

}  // namespace balancenet::data

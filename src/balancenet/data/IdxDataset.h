// IdxDataset: the idx:DIR format, MNIST-layout IDX files of any image size and class count.
#pragma once
#include <string>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

// Opens train-images-idx3-ubyte/train-labels-idx1-ubyte (training) and t10k-* (held out) in `dir`, each
// plain or .gz: images [N,1,H,W] normalised with the training images' mean and std (or --normalize), class
// count = the largest training label + 1. Throws UsageError with one line naming the file for a missing or
// malformed file, counts that differ, test images of another size or a test label the training set lacks.
DatasetPair openIdx(const std::string& dir, const DataOptions& options);

}  // namespace balancenet::data

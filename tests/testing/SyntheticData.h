// SyntheticData: small MNIST-shaped datasets for fast tests, in memory or as IDX files on disk.
#pragma once
#include <string>

#include "balancenet/data/MnistDataset.h"

namespace balancenet::testing {

// n random 28x28 images with labels 0..9, deterministic for a seed, normalised like the real data.
data::MnistDataset syntheticDataset(int64_t n, uint64_t seed);

// Writes train-* (nTrain samples) and t10k-* (nTest) IDX files, gzip or plain, into dir.
void writeSyntheticMnistDir(const std::string& dir, int64_t nTrain, int64_t nTest, bool gzip = true);

}  // namespace balancenet::testing

// DataFiles: small data sets in each --data format, written as a user's tools write them, for the
// tests that train on them (multi-rank exactness, the binary end to end).
#pragma once
#include <cstdint>
#include <string>

namespace balancenet::testing {

// Each writer returns "" on success, else what failed (for ASSERT_EQ(writeX(...), "")).

// DIR/<class>/<i>.png: `classes` class folders of `perClass` random 11x9 RGB PNGs, written by PIL
// (tests/unit/data/write_test_images.py with the project's Python).
std::string writeImageFolder(const std::string& dir, int classes, int perClass);

// `bytes` bytes of English-like text (words from a fixed list, drawn by a fixed rule): a text: corpus.
std::string writeTextCorpus(const std::string& path, int64_t bytes);

// DIR/x.npy float32 [n, 6] and DIR/y.npy float32 [n, 2] (a noisy linear function of x), by numpy.
std::string writeNpyRegression(const std::string& dir, int64_t n);

// CIFAR-10's binary batches in DIR/FOLDER (data_batch_1..5.bin, test_batch.bin), `perBatch` records
// each, by numpy. Sample s (numbered across the batches, the test batch last) has label s % 10 and
// the HWC pixel (y, x, c) = (s * 7 + y * 32 + x * 3 + c * 50) % 256; records store the label byte,
// then the red, green and blue planes.
std::string writeCifar10Batches(const std::string& dir, int perBatch, const std::string& folder = ".");

}  // namespace balancenet::testing

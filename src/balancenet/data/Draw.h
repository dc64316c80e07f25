// Draw: one sample as training draws it, with the seed of its augmentation (no torch: the sampler uses it).
#pragma once
#include <cstdint>

namespace balancenet::data {

// A training draw: which sample and the seed of its augmentation. The seed is a function of the run's
// seed, the epoch and the sample only (augmentSeed below), so whatever the split, the same position of
// the global stream trains the same augmented sample.
struct Draw {
  int64_t index = 0;
  uint64_t augmentSeed = 0;
};
uint64_t augmentSeed(uint64_t runSeed, int64_t epoch, int64_t index);

}  // namespace balancenet::data

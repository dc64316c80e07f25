// GlobalPermutationSampler: which dataset samples each rank trains on, one shared permutation per epoch.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "balancenet/core/Split.h"
#include "balancenet/data/Draw.h"

namespace balancenet::data {

// The data is an infinite stream of positions: position p lies in epoch p / N at place p % N of that
// epoch's permutation of [0, N). A step consumes global_batch consecutive positions starting at
// stepBegin, and rank r takes [stepBegin + split.offsetOf(r), + split.batches[r]). So each sample is used
// exactly once per epoch whatever the split, and the split may change between steps.
// Permutations depend only on (seed, epoch) and are bit-identical across processes and platforms.
// Not thread-safe: it caches permutations.
class GlobalPermutationSampler {
 public:
  GlobalPermutationSampler(int64_t datasetSize, uint64_t seed);

  // Dataset indices at stream positions [begin, begin + count); may straddle epochs.
  std::vector<int64_t> indicesAt(int64_t begin, int64_t count);
  // Rank `rank`'s share of the step whose global batch starts at stream position stepBegin.
  std::vector<int64_t> rankIndices(int64_t stepBegin, const Split& split, int rank);
  // The same positions as draws: each index with its augmentation seed, augmentSeed(seed, epoch, index),
  // so a sample's augmentation depends on where it lies in the stream, never on which rank trains it.
  std::vector<Draw> drawsAt(int64_t begin, int64_t count);
  std::vector<Draw> rankDraws(int64_t stepBegin, const Split& split, int rank);
  int64_t epochOf(int64_t position) const { return position / size_; }
  int64_t datasetSize() const { return size_; }

 private:
  // Rank `rank`'s stream positions in the step at stepBegin; out_of_range for a rank outside the split.
  struct Share {
    int64_t begin;
    int64_t count;
  };
  static Share shareOf(int64_t stepBegin, const Split& split, int rank);
  const std::vector<int64_t>& permutation(int64_t epoch);

  int64_t size_;
  uint64_t seed_;
  // A step can straddle two epochs, so keep the current and the next one.
  struct Cached {
    int64_t epoch = -1;
    std::vector<int64_t> perm;
  };
  std::array<Cached, 2> cache_;
};

}  // namespace balancenet::data

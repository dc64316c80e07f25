// GlobalPermutationSampler: portable per-epoch Fisher-Yates permutations and the stream-to-rank mapping.
#include "balancenet/data/GlobalPermutationSampler.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace balancenet::data {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [0, bound) by rejection: std::uniform_int_distribution's algorithm is
// implementation-defined, mt19937_64's output sequence is not. Rejecting draws below 2^64 mod bound
// leaves a range that is an exact multiple of bound, so the modulo is unbiased.
uint64_t boundedDraw(std::mt19937_64& gen, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = gen();
    if (r >= threshold) return r % bound;
  }
}

}  // namespace

GlobalPermutationSampler::GlobalPermutationSampler(int64_t datasetSize, uint64_t seed)
    : size_(datasetSize), seed_(seed) {
  if (datasetSize <= 0)
    throw std::invalid_argument("GlobalPermutationSampler: dataset size must be positive, got " +
                                std::to_string(datasetSize));
}

const std::vector<int64_t>& GlobalPermutationSampler::permutation(int64_t epoch) {
  for (auto& c : cache_)
    if (c.epoch == epoch) return c.perm;
  // Streams move forward: evict the older epoch so that (current, next) stay cached.
  Cached& slot = cache_[0].epoch <= cache_[1].epoch ? cache_[0] : cache_[1];
  slot.epoch = -1;  // stays invalid should the fill below throw
  slot.perm.resize(static_cast<size_t>(size_));
  std::iota(slot.perm.begin(), slot.perm.end(), int64_t{0});
  // Mixing the epoch through a second splitmix64 keeps (seed, epoch) pairs from colliding via XOR.
  std::mt19937_64 gen(splitmix64(seed_ ^ splitmix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = size_ - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(boundedDraw(gen, static_cast<uint64_t>(i) + 1));
    std::swap(slot.perm[static_cast<size_t>(i)], slot.perm[static_cast<size_t>(j)]);
  }
  slot.epoch = epoch;
  return slot.perm;
}

std::vector<int64_t> GlobalPermutationSampler::indicesAt(int64_t begin, int64_t count) {
  if (begin < 0 || count < 0)
    throw std::invalid_argument("GlobalPermutationSampler::indicesAt: negative position " + std::to_string(begin) +
                                " or count " + std::to_string(count));
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  int64_t pos = begin;
  const int64_t end = begin + count;
  while (pos < end) {
    const int64_t epoch = epochOf(pos);
    const int64_t place = pos % size_;
    const int64_t take = std::min(end - pos, size_ - place);
    const auto& perm = permutation(epoch);
    out.insert(out.end(), perm.begin() + place, perm.begin() + place + take);
    pos += take;
  }
  return out;
}

std::vector<int64_t> GlobalPermutationSampler::rankIndices(int64_t stepBegin, const Split& split, int rank) {
  if (rank < 0 || rank >= split.worldSize())
    throw std::out_of_range("GlobalPermutationSampler::rankIndices: rank " + std::to_string(rank) +
                            " outside a split of " + std::to_string(split.worldSize()) + " ranks");
  return indicesAt(stepBegin + split.offsetOf(rank), split.batches[static_cast<size_t>(rank)]);
}

}  // namespace balancenet::data

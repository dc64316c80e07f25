// GlobalPermutationSampler: portable per-epoch Fisher-Yates permutations and the stream-to-rank mapping.
#include "balancenet/data/GlobalPermutationSampler.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "balancenet/core/PortableRandom.h"

namespace balancenet::data {

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
  auto gen = seededGenerator(seed_, static_cast<uint64_t>(epoch));
  portableShuffle(slot.perm, gen);
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

GlobalPermutationSampler::Share GlobalPermutationSampler::shareOf(int64_t stepBegin, const Split& split, int rank) {
  if (rank < 0 || rank >= split.worldSize())
    throw std::out_of_range("GlobalPermutationSampler: rank " + std::to_string(rank) + " outside a split of " +
                            std::to_string(split.worldSize()) + " ranks");
  return {stepBegin + split.offsetOf(rank), split.batches[static_cast<size_t>(rank)]};
}

std::vector<int64_t> GlobalPermutationSampler::rankIndices(int64_t stepBegin, const Split& split, int rank) {
  const Share share = shareOf(stepBegin, split, rank);
  return indicesAt(share.begin, share.count);
}

std::vector<Draw> GlobalPermutationSampler::drawsAt(int64_t begin, int64_t count) {
  const std::vector<int64_t> indices = indicesAt(begin, count);
  std::vector<Draw> out(indices.size());
  for (size_t i = 0; i < indices.size(); ++i)
    out[i] = {indices[i], augmentSeed(seed_, epochOf(begin + static_cast<int64_t>(i)), indices[i])};
  return out;
}

std::vector<Draw> GlobalPermutationSampler::rankDraws(int64_t stepBegin, const Split& split, int rank) {
  const Share share = shareOf(stepBegin, split, rank);
  return drawsAt(share.begin, share.count);
}

}  // namespace balancenet::data

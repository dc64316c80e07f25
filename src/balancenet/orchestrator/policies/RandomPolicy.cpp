// RandomPolicy: uniform over all compositions of B into N positive parts (stars and bars).
#include "balancenet/orchestrator/policies/RandomPolicy.h"

#include <random>
#include <set>

#include <fmt/format.h>

#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

namespace {

// splitmix64 finaliser: decorrelates nearby (seed, step) pairs before seeding the generator.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

Decision RandomPolicy::decide(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  const int64_t b = input.globalBatch;
  // mt19937_64's raw output is fixed by the standard (unlike its distributions), so splits are reproducible
  // across standard libraries. The modulo bias of a 64-bit draw over < 2^40 cut points is negligible.
  std::mt19937_64 rng(mix(seed_ ^ mix(static_cast<uint64_t>(input.step))));
  // N-1 distinct cut points in [1, B-1] split [0, B) into N non-empty runs.
  std::set<int64_t> cuts;
  while (static_cast<int>(cuts.size()) < n - 1) cuts.insert(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(b - 1)));
  Split split;
  int64_t previous = 0;
  for (int64_t cut : cuts) {
    split.batches.push_back(cut - previous);
    previous = cut;
  }
  split.batches.push_back(b - previous);
  return {split, fmt::format("random (seed {}, step {})", seed_, input.step)};
}

}  // namespace balancenet::orchestrator

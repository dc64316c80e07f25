// RandomPolicy: uniform over all compositions of B into N positive parts (stars and bars).
#include "balancenet/orchestrator/policies/RandomPolicy.h"

#include <random>
#include <set>

#include <fmt/format.h>

#include "balancenet/core/PortableRandom.h"
#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

Decision RandomPolicy::decide(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  const int64_t b = input.globalBatch;
  auto rng = seededGenerator(seed_, static_cast<uint64_t>(input.step));
  // N-1 distinct cut points in [1, B-1] split [0, B) into N non-empty runs.
  std::set<int64_t> cuts;
  while (static_cast<int>(cuts.size()) < n - 1)
    cuts.insert(1 + static_cast<int64_t>(boundedDraw(rng, static_cast<uint64_t>(b - 1))));
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

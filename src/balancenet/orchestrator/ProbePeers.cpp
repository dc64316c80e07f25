// ProbePeers: ring neighbours plus seeded random peers, and the pairs one probe round covers.
#include "balancenet/orchestrator/ProbePeers.h"

#include <algorithm>
#include <unordered_set>

#include "balancenet/core/PortableRandom.h"

namespace balancenet::orchestrator {

std::vector<int> probePeers(int rank, int worldSize, int k, uint64_t seed) {
  std::vector<int> peers;
  if (worldSize < 2) return peers;
  if (k <= 0 || k >= worldSize - 1) {
    for (int j = 0; j < worldSize; ++j)
      if (j != rank) peers.push_back(j);
    return peers;
  }
  std::unordered_set<int> chosen{rank};
  auto add = [&](int peer) {
    if (static_cast<int>(peers.size()) < k && chosen.insert(peer).second) peers.push_back(peer);
  };
  add((rank + 1) % worldSize);
  add((rank + worldSize - 1) % worldSize);
  auto gen = seededGenerator(seed, static_cast<uint64_t>(rank));
  while (static_cast<int>(peers.size()) < k) add(static_cast<int>(boundedDraw(gen, static_cast<uint64_t>(worldSize))));
  return peers;
}

std::vector<std::pair<int, int>> probePairs(int worldSize, int k, uint64_t seed) {
  std::vector<std::pair<int, int>> pairs;
  for (int r = 0; r < worldSize; ++r)
    for (int p : probePeers(r, worldSize, k, seed)) pairs.emplace_back(std::min(r, p), std::max(r, p));
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

std::optional<comm::ProbeSelection> probeSelection(int rank, int worldSize, int k, uint64_t seed) {
  if (k <= 0) return std::nullopt;
  return comm::ProbeSelection{probePairs(worldSize, k, seed), probePeers(rank, worldSize, k, seed)};
}

}  // namespace balancenet::orchestrator

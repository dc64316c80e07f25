// ProbePeers: which k ranks each rank probes (--probe-peers) when all-pairs probing (N^2 ping-pongs) is too much.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "balancenet/comm/LatencyProbe.h"

namespace balancenet::orchestrator {

// The peers of `rank`: its ring neighbours (rank+1, rank-1 mod N) first, then ranks drawn uniformly without
// replacement from the others with a generator seeded by (seed, rank), until min(k, N-1) distinct peers.
// A pure function, so every rank computes every rank's peers alike (the probe walks all pairs in one
// global order). k <= 0 or k >= N-1: every other rank, in rank order (all pairs).
std::vector<int> probePeers(int rank, int worldSize, int k, uint64_t seed = 1);

// The undirected pairs (a < b) that the peer sets of all ranks make, sorted: what one probe round measures.
// O(N k) pairs, instead of N(N-1)/2.
std::vector<std::pair<int, int>> probePairs(int worldSize, int k, uint64_t seed = 1);

// What comm::probeLinks walks for `rank` with --probe-peers k: probePairs and this rank's probePeers;
// nothing for k <= 0 (all pairs, one latency per rank).
std::optional<comm::ProbeSelection> probeSelection(int rank, int worldSize, int k, uint64_t seed = 1);

}  // namespace balancenet::orchestrator

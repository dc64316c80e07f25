// Exchange: the algorithm one all-reduce runs by (the ring of c10d's process group, or, over the job's own Gloo
// mesh, Gloo's halving-doubling or a reduce-scatter + all-gather by all-to-all), with what each costs in
// dependent phases: on a CPU-capped host every phase is a wait that can land on a stalled peer.
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::comm {

enum class Exchange {
  Ring,             // c10d's ProcessGroupGloo (it always runs Gloo's ring): 2(P-1) phases
  HalvingDoubling,  // gloo::allreduce's BCUBE of radix 2: recursive halving then doubling, 2 log2(P) phases at 2^k
  AllToAll,         // reduce-scatter then all-gather, each one all-to-all: 2 phases
};

const char* exchangeName(Exchange exchange);

// The group size of each step of Gloo's radix-2 bcube at `worldSize` ranks: 2 while 2 divides what is left,
// then the rest as one group (6: {2, 3}; 5: {5}; 8: {2, 2, 2}).
std::vector<int> halvingDoublingGroups(int worldSize);

// Dependent phases of one all-reduce at `worldSize` ranks (0 alone).
int64_t exchangePhases(Exchange exchange, int worldSize);

}  // namespace balancenet::comm

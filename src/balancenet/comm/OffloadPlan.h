// OffloadPlan: which ranks leave the all-reduce ring to a peer this step (a pure function of the split).
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::comm {

// A rank whose share of the step is below this fraction of the largest share is "slow": on a
// CPU-capped host it is the one most likely to be throttled, and a ring all-reduce waits for every
// member in each of its 2(P-1) phases. Measured on the testbed (docs/communication.md).
constexpr double kDefaultOffloadBelow = 0.5;

// How a step's gradients are summed: the `ring` ranks all-reduce among themselves; every other rank
// r hands its gradient to `peerOf[r]` (a ring rank) with one send and gets the sum back with one recv. A rank
// left out of the step (a share of 0: `leftOut`) hands nothing over; it only gets the sum back.
struct OffloadPlan {
  std::vector<int> ring;      // ascending
  std::vector<int> peerOf;    // per rank: its ring peer, or -1 for a ring rank
  std::vector<bool> leftOut;  // per rank: a share of 0 (a client that sends nothing)
  bool offloads() const { return ring.size() < peerOf.size(); }
  std::vector<int> clientsOf(int rank) const;  // the ranks that hand their gradient to `rank`, ascending
  std::vector<int> sendersTo(int rank) const;  // of those, the ones with a share (their gradient arrives)
};

// Slow ranks (batch < below * largest batch) go to the ring ranks round-robin, in rank order, so the
// extra receive-add-send is spread over the fast ranks. Every rank knows the split, so every rank
// computes the same plan. A rank with a share of 0 is always a client (whatever `below`, even 0): its zero gradient
// has nothing to add, so it neither sits in the ring nor sends. A world of one or an empty split: nobody offloads;
// `below` <= 0: only ranks with a share of 0 do.
OffloadPlan planOffload(const std::vector<int64_t>& batches, double below = kDefaultOffloadBelow);

}  // namespace balancenet::comm

// LatencyProbe: one round of link measurements (round-trip latency to every rank, outgoing bandwidth to the next).
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "balancenet/comm/group/Communicator.h"

namespace balancenet::comm {

// A partial probe round (--probe-peers k > 0), chosen by the caller: orchestrator/ProbePeers.h's probeSelection.
struct ProbeSelection {
  std::vector<std::pair<int, int>> pairs;  // the pairs (a < b) one round measures, sorted; the same on every rank
  std::vector<int> peers;                  // this rank's peers: the ranks its answer's latencies are to, in order
};

struct LinkMeasurements {
  std::vector<double> latencyMs;  // median round trip to each rank, 0 for self; with peers: to peers[k]
  std::vector<int> peers;         // ProbeSelection::peers when probing a selection; empty: all pairs
  // This rank's outgoing bandwidth: 1 MiB sent to the next rank (rank+1)%N, timed until its ack; 0 if N==1.
  double bandwidthBytesPerSecond = 0;
};

// Collective over `probe`: every rank must call it, with the same `repeats`. Use a communicator dedicated
// to probing: the messages would interleave with a training collective running on another thread.
//
// Protocol (deadlock-free because every rank walks the same global order and only blocks on the
// partner of the step it is at; the earliest unfinished step always has both partners at it):
//  1. Latency. For each pair (a, b), a < b, in lexicographic order, ranks outside the pair skip it.
//     a sends a 1-element tensor to b and waits for b's echo, 1 + `repeats` times (the first is a
//     warm-up, not measured). a takes the median round trip and sends it to b, so both ends agree.
//  2. Bandwidth. For r = 0 .. N-1 in order, rank r sends a 1 MiB tensor to (r+1)%N, which answers each
//     with a 1-byte ack; r times 3 such exchanges and keeps the median: bandwidth = 1 MiB / (send + ack).
//     One way only, because links are often asymmetric (a shaped uplink, a busy downlink): an echo
//     would average both directions. The ack's small-message latency is included, negligible next to
//     1 MiB on any real link. Each rank is the sender of one step and the receiver of another; both
//     steps are in the same global order, so the argument above holds.
// Throws RuntimeFailure when a peer dies or the probe communicator times out.
// `withBandwidth` false: latencies only (step 2 skipped, bandwidthBytesPerSecond 0); every rank must pass
// the same value.
//
// With a `selection` (--probe-peers): step 1 walks only selection->pairs, O(N k) ping-pongs instead of
// N(N-1)/2, in the same lexicographic order (the same argument holds); every rank must pass the same pairs.
// The answer is then in the peers' form: latencyMs[i] is to selection->peers[i].
LinkMeasurements probeLinks(Communicator& probe, int repeats = 5, bool withBandwidth = true,
                            const std::optional<ProbeSelection>& selection = std::nullopt);

}  // namespace balancenet::comm

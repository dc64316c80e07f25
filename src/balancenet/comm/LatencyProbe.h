// LatencyProbe: one round of link measurements (round-trip latency to every rank, bandwidth to the next).
#pragma once
#include <vector>

#include "balancenet/comm/Communicator.h"

namespace balancenet::comm {

struct LinkMeasurements {
  std::vector<double> latencyMs;       // median round trip to each rank, 0 for self
  double bandwidthBytesPerSecond = 0;  // to the next rank (rank+1)%N, from a ~1 MiB round trip; 0 if N==1
};

// Collective over `probe`: every rank must call it, with the same `repeats`. Use a communicator dedicated
// to probing: the messages would interleave with a training collective running on another thread.
//
// Protocol (deadlock-free because every rank walks the same global order and only blocks on the
// partner of the step it is at; the earliest unfinished step always has both partners at it):
//  1. Latency. For each pair (a, b), a < b, in lexicographic order, ranks outside the pair skip it.
//     a sends a 1-element tensor to b and waits for b's echo, 1 + `repeats` times (the first is a
//     warm-up, not measured). a takes the median round trip and sends it to b, so both ends agree.
//  2. Bandwidth. For r = 0 .. N-1 in order, rank r sends a 1 MiB tensor to (r+1)%N, which echoes it
//     back; r times 3 such round trips and keeps the median: bandwidth = 2 MiB / round trip (the
//     small-message latency is included, negligible next to 1 MiB on any real link).
// Throws RuntimeFailure when a peer dies or the probe communicator times out.
LinkMeasurements probeLinks(Communicator& probe, int repeats = 5);

}  // namespace balancenet::comm

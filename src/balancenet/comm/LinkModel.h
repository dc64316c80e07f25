// LinkModel: how long a message takes on this node's network link, beyond what the real network took.
#pragma once
#include <chrono>
#include <cstdint>

namespace balancenet::comm {

// The Communicator asks it, for every message it starts, when the message would be delivered; waiting
// for the message then lasts until then at least. Emulation implements it (slow or far links); without
// one, messages take what loopback or the real network takes.
class LinkModel {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~LinkModel() = default;
  // `wireBytes`: what this rank sends for the operation (ring all-reduce: 2(P-1)/P of the payload).
  // Called in the order operations are started, possibly from several threads.
  virtual Clock::time_point deliveredAt(Clock::time_point start, int64_t wireBytes) = 0;
};

}  // namespace balancenet::comm

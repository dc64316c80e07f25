// LatencyProbe: ordered point-to-point ping-pongs over the probe communicator (see the header's protocol).
#include "balancenet/comm/LatencyProbe.h"

#include <algorithm>
#include <chrono>

#include <ATen/ATen.h>

#include "balancenet/core/Median.h"

namespace balancenet::comm {
namespace {

// Distinct tags per phase, so a stray message of one phase can never be taken for another's.
constexpr int kPingTag = 1;
constexpr int kResultTag = 2;
constexpr int kBulkTag = 3;
constexpr int kAckTag = 4;
constexpr int64_t kBulkBytes = 1 << 20;
constexpr int kBulkTransfers = 3;

using Clock = std::chrono::steady_clock;

// Times `times` exchanges with `peer`, in milliseconds: `message` sent with `tag`, then `reply` received
// with `replyTag` (the same tensor and tag for an echo).
std::vector<double> pingPong(Communicator& comm, at::Tensor& message, int tag, at::Tensor& reply, int replyTag,
                             int peer, int times) {
  std::vector<double> ms;
  for (int i = 0; i < times; ++i) {
    const auto start = Clock::now();
    comm.send(message, peer, tag);
    comm.recv(reply, peer, replyTag);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

// The other end of pingPong: receives into `message`, answers with `reply`.
void answer(Communicator& comm, at::Tensor& message, int tag, at::Tensor& reply, int replyTag, int peer, int times) {
  for (int i = 0; i < times; ++i) {
    comm.recv(message, peer, tag);
    comm.send(reply, peer, replyTag);
  }
}

// Every pair (a < b) of `worldSize` ranks, in lexicographic order.
std::vector<std::pair<int, int>> allPairs(int worldSize) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < worldSize; ++a)
    for (int b = a + 1; b < worldSize; ++b) pairs.emplace_back(a, b);
  return pairs;
}

void measureLatencies(Communicator& comm, int repeats, const std::vector<std::pair<int, int>>& pairs,
                      std::vector<double>& latencyMs) {
  const int self = comm.rank();
  auto ping = at::zeros({1}, at::kDouble);
  for (const auto& [a, b] : pairs) {
    if (self == a) {
      pingPong(comm, ping, kPingTag, ping, kPingTag, b, 1);  // warm-up
      latencyMs[b] = median(pingPong(comm, ping, kPingTag, ping, kPingTag, b, repeats));
      auto result = at::full({1}, latencyMs[b], at::kDouble);
      comm.send(result, b, kResultTag);
    } else if (self == b) {
      answer(comm, ping, kPingTag, ping, kPingTag, a, 1 + repeats);  // an echo
      auto result = at::zeros({1}, at::kDouble);
      comm.recv(result, a, kResultTag);
      latencyMs[a] = result.item<double>();
    }
  }
}

double measureBandwidth(Communicator& comm) {
  const int self = comm.rank();
  const int n = comm.size();
  double bandwidth = 0;
  auto bulk = at::zeros({kBulkBytes}, at::kByte);
  auto ack = at::zeros({1}, at::kByte);
  for (int r = 0; r < n; ++r) {
    const int next = (r + 1) % n;
    if (self == r) {
      const double ms = median(pingPong(comm, bulk, kBulkTag, ack, kAckTag, next, kBulkTransfers));
      bandwidth = ms > 0 ? kBulkBytes / (ms / 1000.0) : 0;
    } else if (self == next) {
      answer(comm, bulk, kBulkTag, ack, kAckTag, r, kBulkTransfers);
    }
  }
  return bandwidth;
}

}  // namespace

LinkMeasurements probeLinks(Communicator& probe, int repeats, bool withBandwidth,
                            const std::optional<ProbeSelection>& selection) {
  LinkMeasurements out;
  out.latencyMs.assign(probe.size(), 0.0);
  if (probe.size() < 2) return out;
  measureLatencies(probe, std::max(repeats, 1), selection ? selection->pairs : allPairs(probe.size()), out.latencyMs);
  // With a selection (even k >= N-1, where the peers are every other rank) the answer is in the peers' form,
  // which is what the Orchestrator's rows carry under --probe-peers: this rank's own peers (it took part in
  // every pair they make), in their order.
  if (selection) {
    out.peers = selection->peers;
    std::vector<double> toPeers;
    for (int p : out.peers) toPeers.push_back(out.latencyMs[p]);
    out.latencyMs = std::move(toPeers);
  }
  if (withBandwidth) out.bandwidthBytesPerSecond = measureBandwidth(probe);
  return out;
}

}  // namespace balancenet::comm

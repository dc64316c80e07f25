// ClientLink: a federated client's emulated network link (--net-delay-ms, --net-bandwidth-mbps): every model
// message to or from the client takes at least delay + bytes * 8 / bandwidth.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::federated {

struct ClientLink {
  double delayMs = 0;        // 0: no added latency
  double bandwidthMbps = 0;  // megabit/s; 0: unlimited
  bool emulated() const { return delayMs > 0 || bandwidthMbps > 0; }
};

// Client `client`'s link from the per-client lists (empty lists: none).
ClientLink clientLinkOf(const std::vector<double>& delayMs, const std::vector<double>& bandwidthMbps, int client);
// A client started alone (`federate join`): ONE value each, as given on its command line ("" for none).
// Throws UsageError naming the flag for anything but one number >= 0.
ClientLink parseClientLink(const std::string& delayMs, const std::string& bandwidthMbps);

// A message's bytes on the wire: the header and `modelSize` float32 values.
int64_t messageBytes(int64_t modelSize);
// The emulated transfer time of a message of `bytes` (emulation::linkTransferSeconds).
double transferSeconds(const ClientLink& link, int64_t bytes);
// The client sleeps it out: after receiving a task (download) and before sending its update (upload), on top
// of the real transfer (loopback or a LAN: milliseconds), so the server sees the slow link in a task's seconds.
void emulateTransfer(const ClientLink& link, int64_t bytes);

}  // namespace balancenet::federated

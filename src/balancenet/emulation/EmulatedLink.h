// EmulatedLink: a slower or farther network than loopback, for every message a communicator sends.
#pragma once
#include <mutex>
#include <vector>

#include "balancenet/comm/LinkModel.h"

namespace balancenet::emulation {

// Per-node latency (--net-delay-ms) and bandwidth (--net-bandwidth-mbps). A collective is as slow as
// its slowest participant, so every rank charges each message the largest latency and the smallest
// bandwidth of the job: all ranks then agree on when it is delivered, as on a real slow link.
// Transfers on the link are serial (a message waits for the previous one to leave) and latency is
// paid on top, so many small messages cost more than one fused message, as on a real network.
class EmulatedLink : public comm::LinkModel {
 public:
  // Empty vectors: no extra latency / unlimited bandwidth. Bandwidth in bytes per second, 0: unlimited.
  EmulatedLink(const std::vector<double>& latencyMs, const std::vector<double>& bandwidthBytesPerSecond);
  Clock::time_point deliveredAt(Clock::time_point start, int64_t wireBytes) override;

  double latencyMs() const { return latencyMs_; }
  double bandwidthBytesPerSecond() const { return bandwidth_; }

 private:
  double latencyMs_ = 0;
  double bandwidth_ = 0;  // 0: unlimited
  std::mutex mutex_;
  Clock::time_point linkFreeAt_{};
};

}  // namespace balancenet::emulation

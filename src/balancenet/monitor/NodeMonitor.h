// NodeMonitor: live node metrics (memory, link latency and bandwidth) sampled on a background thread.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "balancenet/comm/LatencyProbe.h"
#include "balancenet/comm/group/Communicator.h"

namespace balancenet::monitor {

struct NodeSnapshot {
  double residentBytes = 0;            // this process's RSS
  double memoryTotalBytes = 0;         // the node's memory
  double memoryAvailableBytes = 0;     // the node's available memory
  std::vector<double> latencyMs;       // from the latest link round; empty until the first one
  std::vector<int> latencyPeers;       // with Options::probeSelection: the ranks latencyMs[k] is to; else empty
  double bandwidthBytesPerSecond = 0;  // to rank (rank+1)%N, latest round; 0: unknown
  int64_t probeRounds = 0;             // link rounds completed so far
  int64_t bandwidthRounds = 0;         // those of them that measured the bandwidth (Options::bandwidthShare)
};

// Training never waits for it: the thread owns a DEDICATED probe communicator, so its messages never
// interleave with the training collectives. Memory is sampled every `memoryEvery`, links every
// `linksEvery` (the first round right at start).
//
// Shutdown protocol: before every link round all ranks all-reduce a stop flag (1 if this rank wants to
// stop); on a non-zero sum they all leave the probing loop together, so no peer is left blocked in a
// round. stop() raises the flag and wakes the thread, which takes part in one last all-reduce at once;
// it returns when every peer has reached its next round (at most about `linksEvery` after the call,
// sooner when the peers stop too). If the probe communicator fails (a peer died, a timeout) the
// failure is logged at debug level and probing ends; memory sampling goes on. The thread never throws.
class NodeMonitor {
 public:
  struct Options {
    std::chrono::milliseconds memoryEvery{200};
    std::chrono::milliseconds linksEvery{2000};
    int repeats = 5;  // ping-pongs per pair per round
    // The most of the time that the bandwidth measurement (3 MiB per rank) may take: on a 20 Mbit/s link
    // it lasts over a second, so measuring it every round would take most of the link from training.
    // After a measurement that took t, the next waits until t / bandwidthShare has passed.
    double bandwidthShare = 0.02;
    // --probe-peers: the pairs a round walks and this rank's peers (orchestrator/ProbePeers.h); nothing: all pairs.
    std::optional<comm::ProbeSelection> probeSelection;
  };

  // `probe` may be null: memory only, no link probing (and no collective on stop).
  explicit NodeMonitor(std::unique_ptr<comm::Communicator> probe);
  NodeMonitor(std::unique_ptr<comm::Communicator> probe, Options options);
  ~NodeMonitor();  // stop()
  NodeMonitor(const NodeMonitor&) = delete;
  NodeMonitor& operator=(const NodeMonitor&) = delete;

  NodeSnapshot snapshot() const;  // thread-safe copy of the latest figures
  void stop();                    // idempotent; joins the thread

 private:
  void run();
  void sampleMemory();
  // One stop-flag all-reduce and, if nobody wants to stop, one link round. False: probing is over.
  bool linkRound(bool wantStop);

  std::unique_ptr<comm::Communicator> probe_;
  const Options options_;
  mutable std::mutex mutex_;  // guards snapshot_ and stopRequested_
  std::condition_variable wake_;
  NodeSnapshot snapshot_;
  std::chrono::steady_clock::time_point nextBandwidth_{};  // this rank's budget; only the monitor thread
  bool stopRequested_ = false;
  std::mutex joinMutex_;  // stop() may race with the destructor's stop()
  std::thread thread_;
};

}  // namespace balancenet::monitor

// Policy: decides a split from what the nodes measured. Policies never see emulation settings, only metrics.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "balancenet/core/Split.h"

namespace balancenet::orchestrator {

// What the master knows about one node when it decides (gathered every --rebalance-every steps).
struct NodeMetrics {
  int rank = 0;
  int64_t batch = 0;     // samples in the split that was in force
  double computeMs = 0;  // mean compute time (forward+backward, slowness included) over the window
  double waitMs = 0;     // mean time waiting for slower peers over the window
  // Mean of the rank's own work per step that the exchange waits for, whatever its share (StepRecord::ownMs: the
  // optimizer step, a hand-over's packing): a fixed cost that on a capped host can match its compute.
  double ownMs = 0;
  // Of ownMs, the mean a peer spent serving offloaded clients per step, and the mean number it served
  // (StepRecord::servingMs, clientsServed): what one client's hand-over costs the exchange.
  double servingMs = 0;
  double clientsServed = 0;
  // (samples timed, computeMs) of the window's steps, oldest first: the share, or a left-out rank's probe (batch 0)
  std::vector<std::pair<int64_t, double>> recent;
  double flopsPerSample = 0;           // forward FLOPs of one sample of the model
  double opsPerSecond = 0;             // measured training FLOP/s (3 x forward), or the GEMM probe before any step
  double memoryUsedBytes = 0;          // resident set size of the worker (MU_i)
  double memoryTotalBytes = 0;         // memory of the node
  int64_t maxBatch = 0;                // largest batch that fits in memory; 0: unknown / unlimited
  std::vector<double> latencyMs;       // NL_ij: median round-trip latency to rank j (0 for j == i)...
  std::vector<int> latencyPeers;       // ...or, when not empty, latencyMs[k] is to rank latencyPeers[k] (--probe-peers)
  double bandwidthBytesPerSecond = 0;  // to the next rank; 0: unknown
};

struct PolicyInput {
  int64_t step = 0;                // the first step the decided split will be used for
  int64_t globalBatch = 0;         // B
  Split current;                   // the split in force until now
  std::vector<NodeMetrics> nodes;  // indexed by rank
};

// A decision: the split, and a short human-readable note of why (logged in splits.csv).
struct Decision {
  Split split;
  std::string note;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Deterministic given the sequence of inputs (a policy may keep state such as fitted node models).
  virtual Decision decide(const PolicyInput& input) = 0;
  // That state, explicitly, so a restarted run decides as this one would have: empty for pure policies.
  virtual std::string saveState() const { return {}; }
  virtual void loadState(const std::string& state) {}
};

}  // namespace balancenet::orchestrator

// StepLaw: a simulated node's compute time per step: (fixed + per-sample x b) / speed, times noise, with
// stragglers, a random-walk drift of the speed and scheduled sudden changes.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "balancenet/simulate/Distribution.h"

namespace balancenet::simulate {

// From `step` on, node `node`'s speed is multiplied by `factor` (--change step:node:factor).
struct SpeedChange {
  int64_t step = 0;
  int node = 0;
  double factor = 1;
};

struct StepLawOptions {
  double fixedMs = 5;                                          // per step at speed 1, whatever the batch
  double perSampleMs = 0.5;                                    // per sample at speed 1
  Distribution noise{Distribution::Kind::LogNormal, 1, 0.05};  // multiplies every step's time
  double stragglerProbability = 0;                             // per node and step...
  double stragglerFactor = 3;                                  // ...the step takes this many times longer
  double drift = 0;                                            // sigma of log(speed)'s random walk per step
  std::vector<SpeedChange> changes;

  // "100:3:0.125,200:3:8"; throws UsageError naming --change.
  static std::vector<SpeedChange> parseChanges(const std::string& text);
};

// The nodes of one simulated cluster and their current speeds. Every draw comes from one generator
// seeded by the run's seed, in a fixed order, so a run is reproducible.
class ClusterLaw {
 public:
  ClusterLaw(std::vector<double> speeds, StepLawOptions options, uint64_t seed);

  // Applies the drift and the changes due at `step`; call once per step before stepMs.
  void advance(int64_t step);
  // One step's compute time of `node` at `batch` samples (noise and stragglers drawn).
  double stepMs(int node, int64_t batch);
  // The expected compute time at the current speed (noise mean, straggler expectation): a + c b.
  double expectedFixedMs(int node) const;
  double expectedPerSampleMs(int node) const;
  const std::vector<double>& speeds() const { return speeds_; }
  int size() const { return static_cast<int>(speeds_.size()); }

 private:
  std::vector<double> speeds_;
  StepLawOptions options_;
  std::mt19937_64 gen_;
  double expectedFactor_;  // E[noise] x E[straggler factor]
};

}  // namespace balancenet::simulate

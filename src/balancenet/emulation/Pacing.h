// Pacing: how long an emulated node sleeps after a piece of real compute (one rule for the data-parallel
// stragglers and the federated clients).
#pragma once
#include <cstdint>

namespace balancenet::emulation {

// Relative (--slowdown s): the work lasts s x its real time. Paced (--node-speed v samples/s): it lasts
// max(real, samples / v). Returns the milliseconds to sleep after `computeMs` of real work on `samples`
// samples; negative when a paced node's real compute already exceeds the pace (it is slower than asked).
enum class PaceMode { Relative, Paced };
inline double paceSleepMs(PaceMode mode, double factor, double computeMs, int64_t samples) {
  if (mode == PaceMode::Relative) return (factor - 1) * computeMs;
  return 1000.0 * static_cast<double>(samples) / factor - computeMs;
}

}  // namespace balancenet::emulation

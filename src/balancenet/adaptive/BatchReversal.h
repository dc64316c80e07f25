// BatchReversal: the sizer may not undo its last change of B on predictions alone. Predictions from node lines
// fitted at one or two batch sizes and from a noisy noise scale made B flip-flop in a stationary run (2 workers,
// one 3x slower: 128 -> 71 -> 33 -> 66 -> 36 -> 66 within 25 steps): a move back toward the previous B goes ahead
// only when the steps measured at both Bs show its gain (goodput at today's noise scale, above the hysteresis).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace balancenet::adaptive {

// The steps measured at one B: their mean time (rank 0's whole step) and how many.
struct MeasuredSteps {
  int64_t batch = 0;  // 0: none (no previous B)
  double meanMs = 0;
  int64_t steps = 0;
};

// Fewer steps than this at a B are no measurement of it.
inline constexpr int64_t kMinMeasuredSteps = 3;

// Measured goodput at `m`: B / step x statistical efficiency at `noiseScale` (base-batch samples per second);
// 0 when fewer than kMinMeasuredSteps steps were measured.
double measuredGoodput(const MeasuredSteps& m, double noiseScale, int64_t baseBatch);

// Why the move from `current.batch` to `proposed` may not go ahead, or nothing when it may: it may unless it goes
// back toward `previous.batch` (the B before the current one) and the measurements do not show the previous B's
// goodput above the current one's by more than `hysteresis`.
std::optional<std::string> reversalRefusal(const MeasuredSteps& current, int64_t proposed,
                                           const MeasuredSteps& previous, double noiseScale, int64_t baseBatch,
                                           double hysteresis);

}  // namespace balancenet::adaptive

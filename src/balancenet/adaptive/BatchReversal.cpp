// A move back toward the previous B needs the measurements' word (see BatchReversal.h).
#include "balancenet/adaptive/BatchReversal.h"

#include <fmt/format.h>

#include "balancenet/adaptive/GoodputPlanner.h"

namespace balancenet::adaptive {

double measuredGoodput(const MeasuredSteps& m, double noiseScale, int64_t baseBatch) {
  if (m.batch <= 0 || m.steps < kMinMeasuredSteps || !(m.meanMs > 0)) return 0;
  return static_cast<double>(m.batch) * 1000.0 / m.meanMs * statisticalEfficiency(noiseScale, baseBatch, m.batch);
}

std::optional<std::string> reversalRefusal(const MeasuredSteps& current, int64_t proposed,
                                           const MeasuredSteps& previous, double noiseScale, int64_t baseBatch,
                                           double hysteresis) {
  const bool backward = previous.batch > 0 && proposed != current.batch &&
                        (proposed - current.batch > 0) == (previous.batch - current.batch > 0);
  if (!backward) return std::nullopt;
  const double here = measuredGoodput(current, noiseScale, baseBatch);
  const double there = measuredGoodput(previous, noiseScale, baseBatch);
  if (here > 0 && there > here * (1 + hysteresis)) return std::nullopt;
  if (here <= 0 || there <= 0)
    return fmt::format("keeping B={}: B={} would go back toward B={}, and not both are measured yet", current.batch,
                       proposed, previous.batch);
  return fmt::format(
      "keeping B={}: B={} would go back toward B={}, measured at {:.0f} against {:.0f} samples/s of "
      "goodput here, within the {:.0f}% hysteresis",
      current.batch, proposed, previous.batch, there, here, 100 * hysteresis);
}

}  // namespace balancenet::adaptive

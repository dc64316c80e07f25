// Formatting of progress lines.
#include "balancenet/metrics/ProgressLine.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace balancenet::metrics {

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<int64_t>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string formatProgress(const Progress& p) {
  const double rate =
      p.elapsedSeconds > 0 ? static_cast<double>(p.samplesDone * p.unitsPerSample) / p.elapsedSeconds : 0;
  double eta = p.step > 0 ? p.elapsedSeconds / p.step * (p.totalSteps - p.step) : NAN;
  if (p.budgetSeconds > 0)
    eta = std::isnan(eta) ? p.budgetSeconds - p.elapsedSeconds : std::min(eta, p.budgetSeconds - p.elapsedSeconds);
  eta = std::max(eta, 0.0);
  const int pct = p.totalSteps > 0 ? static_cast<int>(100 * p.step / p.totalSteps) : 0;
  std::string line = fmt::format("{} {}/{} ({}%)  {:.1f} {}/s", p.unit, p.step, p.totalSteps, pct, rate, p.rateUnit);
  if (p.loss) line += fmt::format("  loss {:.4f}", *p.loss);
  if (p.testAccuracy) line += fmt::format("  test accuracy {:.2f}%", 100 * *p.testAccuracy);
  if (p.clientAccuracy) line += fmt::format("  client accuracy {:.2f}%", 100 * *p.clientAccuracy);
  return line + "  ETA " + formatDuration(eta);
}

}  // namespace balancenet::metrics

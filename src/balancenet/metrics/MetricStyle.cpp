// MetricStyle: formatting evaluations and the summary's token fields.
#include "balancenet/metrics/MetricStyle.h"

#include <cmath>

#include <fmt/format.h>

namespace balancenet::metrics {

std::string formatEval(const EvalPoint& point, const MetricStyle& style) {
  if (!style.accuracy) return fmt::format("test mse {:.6g}", point.loss);
  if (!style.perplexity)
    return fmt::format("test accuracy {:.2f}%  test loss {:.4f}", 100 * point.accuracy, point.loss);
  std::string line = fmt::format("val loss {:.4f}  perplexity {:.3f}", point.loss, std::exp(point.loss));
  if (style.bitsPerByte) line += fmt::format("  {:.3f} bits/byte", point.loss / std::log(2.0));
  return line + fmt::format("  token accuracy {:.2f}%", 100 * point.accuracy);
}

void addStyleFields(RunSummary& summary, const MetricStyle& style) {
  if (style.unitsPerSample > 1)
    summary.extra["tokens_per_second"] = summary.samplesPerSecond * static_cast<double>(style.unitsPerSample);
  if (summary.evals.empty()) return;
  const double loss = summary.evals.back().loss;
  if (style.perplexity) summary.extra["final_perplexity"] = std::exp(loss);
  if (style.bitsPerByte) summary.extra["final_bits_per_byte"] = loss / std::log(2.0);
  if (!style.accuracy) summary.extra["final_mse"] = loss;
}

}  // namespace balancenet::metrics

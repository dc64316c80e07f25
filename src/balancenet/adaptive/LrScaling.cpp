// LrScaling: parsing of --lr-scaling and the factor each rule applies to the learning rate.
#include "balancenet/adaptive/LrScaling.h"

#include <cmath>

#include "balancenet/core/Error.h"

namespace balancenet::adaptive {

LrScaling parseLrScaling(const std::string& text, const std::string& optimizer) {
  if (text == "none") return LrScaling::None;
  if (text == "linear") return LrScaling::Linear;
  if (text == "sqrt") return LrScaling::Sqrt;
  if (text == "adascale") return LrScaling::AdaScale;
  if (text == "auto") {
    if (optimizer == "sgd") return LrScaling::AdaScale;
    // Adam's per-coordinate normalisation already divides out most of the gradient's scale: a linear (or
    // AdaScale's up-to-linear) increase overshoots, the square root is the rule it is known to follow.
    if (optimizer == "adam" || optimizer == "adamw") return LrScaling::Sqrt;
    throw UsageError("--lr-scaling auto has no rule for --optimizer '" + optimizer +
                     "'; give one of none, linear, sqrt or adascale");
  }
  throw UsageError("--lr-scaling must be auto, none, linear, sqrt or adascale; got '" + text + "'");
}

std::string lrScalingName(LrScaling rule) {
  switch (rule) {
    case LrScaling::None:
      return "none";
    case LrScaling::Linear:
      return "linear";
    case LrScaling::Sqrt:
      return "sqrt";
    case LrScaling::AdaScale:
      return "adascale";
  }
  return "none";
}

// AdaScale's gain in noise-scale terms. Let mu be the true gradient and sigma^2 = tr(Sigma)/B0 the variance
// of a gradient averaged over B0 samples. At B = S B0 the variance is sigma^2/S, so E|g_B|^2 =
// |mu|^2 + sigma^2/S, and AdaScale takes
//   r = E|g_B0|^2 / E|g_B|^2 = (sigma^2 + |mu|^2) / (sigma^2/S + |mu|^2),
// the factor by which one step at B makes the progress of r steps at B0 (r in [1, S]). The gradient noise
// scale (McCandlish et al.) is phi = tr(Sigma)/|mu|^2 = B0 sigma^2/|mu|^2, so sigma^2 = phi |mu|^2 / B0 and
//   r = (phi/B0 + 1) / (phi/(S B0) + 1) = S (phi + B0) / (phi + S B0) = B (phi + B0) / (B0 (phi + B)).
// r / S is Pollux's statistical efficiency (phi + B0) / (phi + B): what one sample at B is worth at B0.
double lrFactor(LrScaling rule, int64_t baseBatch, int64_t batch, double noiseScale) {
  if (baseBatch <= 0 || batch <= 0) throw InternalError("lrFactor needs positive batches");
  const double b0 = static_cast<double>(baseBatch), b = static_cast<double>(batch);
  switch (rule) {
    case LrScaling::None:
      return 1;
    case LrScaling::Linear:
      return b / b0;
    case LrScaling::Sqrt:
      return std::sqrt(b / b0);
    case LrScaling::AdaScale:
      if (!(noiseScale >= 0)) return 1;           // unknown (or NaN)
      if (std::isinf(noiseScale)) return b / b0;  // all noise: the linear rule
      return b * (noiseScale + b0) / (b0 * (noiseScale + b));
  }
  return 1;
}

}  // namespace balancenet::adaptive

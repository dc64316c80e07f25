// GradientNoiseScale: the per-step unbiased estimate for unequal shares and its bias-corrected moving average.
#include "balancenet/adaptive/GradientNoiseScale.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"

namespace balancenet::adaptive {

// With E|g_i|^2 = |G|^2 + S/b_i and E|g|^2 = |G|^2 + S/B, E[A] = |G|^2 + n S/B, so A - |g|^2 (which equals
// sum_i (b_i/B)|g_i - g|^2, the between-worker spread) has mean (n-1) S/B.
std::optional<NoiseEstimate> estimateNoise(const GradientNormSample& s) {
  if (s.workers < 2 || s.globalBatch < s.workers) return std::nullopt;
  if (!std::isfinite(s.weightedLocalSq) || !std::isfinite(s.globalSq)) return std::nullopt;
  if (s.weightedLocalSq < 0 || s.globalSq < 0) return std::nullopt;
  const double batch = static_cast<double>(s.globalBatch);
  NoiseEstimate e;
  e.traceCov = (s.weightedLocalSq - s.globalSq) * batch / (s.workers - 1);
  e.gradSq = s.globalSq - e.traceCov / batch;
  if (!std::isfinite(e.traceCov) || !std::isfinite(e.gradSq)) return std::nullopt;
  return e;
}

NoiseScaleTracker::NoiseScaleTracker(double smoothing) : smoothing_(smoothing) {
  require(smoothing >= 0 && smoothing < 1, "noise scale smoothing must be in [0, 1)");
}

void NoiseScaleTracker::add(const GradientNormSample& s) {
  const auto e = estimateNoise(s);
  if (!e) return;
  const double fresh = 1 - smoothing_;
  gradSqSum_ = smoothing_ * gradSqSum_ + fresh * e->gradSq;
  traceCovSum_ = smoothing_ * traceCovSum_ + fresh * e->traceCov;
  weight_ = smoothing_ * weight_ + fresh;
  ++samples_;
}

double NoiseScaleTracker::gradSq() const { return ready() ? gradSqSum_ / weight_ : 0; }

double NoiseScaleTracker::traceCov() const { return ready() ? traceCovSum_ / weight_ : 0; }

double NoiseScaleTracker::noiseScale() const {
  if (!ready()) return -1;
  const double g = gradSq(), s = traceCov();
  if (g <= 0) return kUnboundedNoiseScale;
  if (s <= 0) return 0;
  // s/g > kUnbounded tested as s > kUnbounded * g: no overflow for a tiny positive g.
  return s > kUnboundedNoiseScale * g ? kUnboundedNoiseScale : s / g;
}

std::string NoiseScaleTracker::saveState() const {
  return nlohmann::json{{"smoothing", smoothing_},
                        {"grad_sq_sum", gradSqSum_},
                        {"trace_cov_sum", traceCovSum_},
                        {"weight", weight_},
                        {"samples", samples_}}
      .dump();
}

void NoiseScaleTracker::loadState(const std::string& json) {
  try {
    const auto j = nlohmann::json::parse(json);
    NoiseScaleTracker t(j.at("smoothing").get<double>());
    t.gradSqSum_ = j.at("grad_sq_sum").get<double>();
    t.traceCovSum_ = j.at("trace_cov_sum").get<double>();
    t.weight_ = j.at("weight").get<double>();
    t.samples_ = j.at("samples").get<int64_t>();
    const bool consistent = std::isfinite(t.gradSqSum_) && std::isfinite(t.traceCovSum_) && t.samples_ >= 0 &&
                            (t.samples_ == 0 ? t.weight_ == 0 : t.weight_ > 0 && t.weight_ <= 1 + 1e-9);
    if (!consistent) throw RuntimeFailure("inconsistent values");
    *this = t;
  } catch (const std::exception& e) {  // json's errors, a bad smoothing (UsageError), the check above
    throw RuntimeFailure(fmt::format("noise scale state unreadable: {}", e.what()));
  }
}

}  // namespace balancenet::adaptive

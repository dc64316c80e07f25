// GradientNoiseScale: the gradient noise scale B_noise = tr(Sigma)/|G|^2 from data-parallel steps with unequal
// shares (docs/allocation.md, "Gradient noise scale"): an unbiased per-step estimate and its smoothed tracker.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace balancenet::adaptive {

// One step's gradient norms, the same on every rank after the sync. Worker i has b_i > 0 samples and the mean
// gradient g_i over them; g = sum_i (b_i/B) g_i is the exact global-batch gradient. A rank with b_i = 0 adds
// nothing to weightedLocalSq and is not counted in workers. Each rank's local gradient before the sum is
// (b_i/B) g_i, so it contributes |local|^2 * B/b_i to weightedLocalSq, one more float in the gradient sum.
struct GradientNormSample {
  int64_t globalBatch = 0;     // B = sum_i b_i
  int workers = 0;             // n: ranks with b_i > 0
  double weightedLocalSq = 0;  // A = sum_i (b_i/B)|g_i|^2
  double globalSq = 0;         // |g|^2
};

// Per-sample |G|^2 (the true gradient's squared norm) and tr(Sigma) (the per-sample gradient covariance's trace).
// gradSq may be negative (noise swamped the signal this step); traceCov is >= 0 up to rounding (A >= |g|^2 by
// convexity).
struct NoiseEstimate {
  double gradSq = 0;
  double traceCov = 0;
};

// The unbiased estimate of one step: traceCov = (A - |g|^2) B/(n-1), gradSq = |g|^2 - traceCov/B, whatever the
// shares. nullopt when it cannot be formed: n < 2 (one gradient has no spread to measure), B < n (not one
// sample per worker: the sample is inconsistent), or a value that is negative or not finite.
std::optional<NoiseEstimate> estimateNoise(const GradientNormSample& s);

// What noiseScale() returns when the smoothed |G|^2 is <= 0, or the ratio exceeds it: the gradient is all noise
// at this point, so any batch is statistically efficient and a planner may take its largest. Finite, so that
// products and JSON stay finite.
constexpr double kUnboundedNoiseScale = 1e12;

// Exponential moving averages of both estimates with AdaptDL's bias correction (each average divided by the
// weight its terms carry, so the first sample counts whole). Smoothing is per accepted step, not per sample as
// in AdaptDL (0.999^scale): the per-step traceCov estimate has the same variance, 2 tr(Sigma^2)/(n-1) under
// Gaussian noise, whatever B, so a larger B's step carries no more information about it.
class NoiseScaleTracker {
 public:
  // 0.99: a horizon of about 100 steps. Long enough to average the per-step noise (Gaussian, 4 workers: traceCov's
  // relative spread is at most sqrt(2/3) = 0.8 a step, about 6% after the average's 199 effective steps); short
  // enough to follow the noise scale's growth over a run of a few thousand steps (AdaptDL's 0.999 per initial
  // batch would lag a whole Fashion-MNIST epoch behind).
  static constexpr double kDefaultSmoothing = 0.99;

  // smoothing in [0, 1): the weight of the past at each accepted step (0: the last step only). UsageError else.
  explicit NoiseScaleTracker(double smoothing = kDefaultSmoothing);

  // Ignores samples estimateNoise rejects (which includes non-finite ones).
  void add(const GradientNormSample& s);
  bool ready() const { return samples_ > 0; }  // at least one accepted sample
  // Smoothed, bias-corrected; 0 when !ready().
  double gradSq() const;
  double traceCov() const;
  // traceCov()/gradSq() clamped to [0, kUnboundedNoiseScale]; kUnboundedNoiseScale when gradSq() <= 0; -1 when
  // !ready().
  double noiseScale() const;
  int64_t samples() const { return samples_; }
  double smoothing() const { return smoothing_; }

  // JSON of everything above, smoothing included (a resumed run continues exactly); loadState throws
  // RuntimeFailure for text it cannot read.
  std::string saveState() const;
  void loadState(const std::string& json);

 private:
  double smoothing_;
  double gradSqSum_ = 0;  // sum over accepted steps of smoothing^age (1 - smoothing) gradSq
  double traceCovSum_ = 0;
  double weight_ = 0;  // sum of smoothing^age (1 - smoothing): 1 - smoothing^samples
  int64_t samples_ = 0;
};

}  // namespace balancenet::adaptive

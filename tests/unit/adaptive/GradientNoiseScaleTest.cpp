// GradientNoiseScale: unbiased for equal and unequal shares (synthetic per-sample gradients, and a real mlp against
// the offline measurement from all its per-sample gradients), the tracker's convergence, its saved state.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "balancenet/adaptive/GradientNoiseScale.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"

namespace balancenet::adaptive {
namespace {

using Vector = std::vector<double>;
using Shares = std::vector<int64_t>;

double squaredNorm(const Vector& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

// The sample of one step from each worker's mean gradient, as the trainer forms it.
GradientNormSample normsOf(const std::vector<Vector>& workerMeans, const Shares& shares) {
  GradientNormSample s;
  for (int64_t b : shares) s.globalBatch += b;
  Vector global(workerMeans[0].size(), 0.0);
  for (size_t i = 0; i < shares.size(); ++i) {
    const double weight = static_cast<double>(shares[i]) / s.globalBatch;
    s.weightedLocalSq += weight * squaredNorm(workerMeans[i]);
    for (size_t k = 0; k < global.size(); ++k) global[k] += weight * workerMeans[i][k];
  }
  s.workers = static_cast<int>(shares.size());
  s.globalSq = squaredNorm(global);
  return s;
}

// Mean, its standard error, and the ratio mean(a)/mean(b) with its delta-method standard error.
struct Stats {
  double mean = 0, stdError = 0, sd = 0;
};
Stats statsOf(const Vector& xs) {
  Stats st;
  for (double x : xs) st.mean += x / xs.size();
  for (double x : xs) st.sd += (x - st.mean) * (x - st.mean) / (xs.size() - 1);
  st.sd = std::sqrt(st.sd);
  st.stdError = st.sd / std::sqrt(static_cast<double>(xs.size()));
  return st;
}
Stats ratioOf(const Vector& a, const Vector& b) {
  const Stats sa = statsOf(a), sb = statsOf(b);
  const double r = sa.mean / sb.mean;
  double cov = 0;
  for (size_t t = 0; t < a.size(); ++t) cov += (a[t] - sa.mean) * (b[t] - sb.mean) / (a.size() - 1);
  const double n = static_cast<double>(a.size());
  const double var = (sa.sd * sa.sd - 2 * r * cov + r * r * sb.sd * sb.sd) / (n * sb.mean * sb.mean);
  return {r, std::sqrt(var), 0};
}

// Per-sample gradients x = G + u with independent uniform components of variance lambda_k: not Gaussian, since
// unbiasedness needs only the first two moments. |G|^2 = 0.08, tr(Sigma) = 8, B_noise = 100.
struct Synthetic {
  static constexpr int kDim = 8;
  double mean(int) const { return 0.1; }
  double variance(int k) const { return (k + 1) / 4.5; }
  double gradSq() const { return kDim * 0.01; }
  double traceCov() const { return 8; }
  // One step: each worker's mean over its b_i fresh samples.
  std::vector<Vector> draw(const Shares& shares, std::mt19937_64& gen) const {
    std::vector<Vector> means;
    for (int64_t b : shares) {
      Vector m(kDim, 0.0);
      for (int64_t j = 0; j < b; ++j)
        for (int k = 0; k < kDim; ++k) m[k] += mean(k) + std::sqrt(3 * variance(k)) * (2 * uniform01(gen) - 1);
      for (double& x : m) x /= b;
      means.push_back(m);
    }
    return means;
  }
};

struct Estimates {
  Vector gradSq, traceCov, naiveTraceCov;
};

// The per-step estimates over `steps` steps, and AdaptDL's equal-share formula on the same norms (the unweighted
// mean of |g_i|^2, as if every share were B/n): the control that unequal shares need the weighted form.
Estimates estimateSteps(const Shares& shares, int steps, uint64_t seed, NoiseScaleTracker* tracker = nullptr) {
  const Synthetic model;
  auto gen = seededGenerator(seed, shares.size());
  Estimates out;
  for (int t = 0; t < steps; ++t) {
    const auto means = model.draw(shares, gen);
    const auto s = normsOf(means, shares);
    const auto e = estimateNoise(s);
    if (!e) {
      ADD_FAILURE() << "step " << t << " rejected";
      continue;
    }
    out.gradSq.push_back(e->gradSq);
    out.traceCov.push_back(e->traceCov);
    double localMean = 0;
    for (const auto& m : means) localMean += squaredNorm(m) / shares.size();
    out.naiveTraceCov.push_back((localMean - s.globalSq) * s.globalBatch / (s.workers - 1));
    if (tracker) tracker->add(s);
  }
  return out;
}

void expectWithin(const Stats& st, double truth, double standardErrors, const char* what) {
  std::printf("%s: mean %.4f truth %.4f (%.2f standard errors)\n", what, st.mean, truth,
              (st.mean - truth) / st.stdError);
  EXPECT_NEAR(st.mean, truth, standardErrors * st.stdError) << what;
}

TEST(GradientNoiseScale, UnbiasedForEqualAndUnequalShares) {
  const Synthetic model;
  for (const Shares& shares : {Shares{100, 100, 100, 100}, Shares{100, 100, 100, 25}, Shares{7, 50, 3}}) {
    const auto est = estimateSteps(shares, 1500, 11);
    expectWithin(statsOf(est.gradSq), model.gradSq(), 4, "|G|^2");
    expectWithin(statsOf(est.traceCov), model.traceCov(), 4, "tr(Sigma)");
    // The test can tell: the equal-share formula is off by far more than these errors, except on equal shares.
    const Stats naive = statsOf(est.naiveTraceCov);
    std::printf("equal-share formula: tr(Sigma) %.4f\n", naive.mean);
    if (shares[0] != shares.back()) {
      EXPECT_GT(std::abs(naive.mean / model.traceCov() - 1), 0.1);
    }
  }
}

// Under Gaussian noise B(A - |g|^2) = sum_i b_i |g_i - g|^2 is tr(W), W ~ Wishart(Sigma, n-1): traceCov's variance
// is 2 tr(Sigma^2)/(n-1) whatever the shares (docs/allocation.md). Means drawn directly as N(G, Sigma/b_i).
TEST(GradientNoiseScale, SpreadDependsOnWorkersNotShares) {
  const Synthetic model;
  double traceSq = 0;
  for (int k = 0; k < Synthetic::kDim; ++k) traceSq += model.variance(k) * model.variance(k);
  for (const Shares& shares : {Shares{20, 20, 20, 20}, Shares{100, 100, 100, 25}, Shares{1, 500, 3, 9}}) {
    auto gen = seededGenerator(5, shares[0]);
    Vector traceCovs;
    for (int t = 0; t < 4000; ++t) {
      std::vector<Vector> means;
      for (int64_t b : shares) {
        Vector m(Synthetic::kDim);
        for (int k = 0; k < Synthetic::kDim; ++k)
          m[k] = model.mean(k) + std::sqrt(model.variance(k) / b) * standardNormal(gen);
        means.push_back(m);
      }
      traceCovs.push_back(estimateNoise(normsOf(means, shares))->traceCov);
    }
    const double expected = std::sqrt(2 * traceSq / (shares.size() - 1));
    EXPECT_NEAR(statsOf(traceCovs).sd / expected, 1, 0.06);  // the sd's own relative error is ~1/sqrt(2T) = 1.1%
  }
}

TEST(GradientNoiseScale, TrackerConvergesToTheNoiseScale) {
  const Synthetic model;
  NoiseScaleTracker tracker;
  EXPECT_FALSE(tracker.ready());
  EXPECT_EQ(tracker.noiseScale(), -1);
  estimateSteps({100, 100, 100, 25}, 600, 3, &tracker);
  EXPECT_EQ(tracker.samples(), 600);
  const double truth = model.traceCov() / model.gradSq();
  std::printf("smoothed noise scale %.1f, truth %.1f\n", tracker.noiseScale(), truth);
  // The average has about 199 effective steps; the ratio's spread is ~4% there, so 15% is ~4 of them.
  EXPECT_NEAR(tracker.noiseScale() / truth, 1, 0.15);
}

// The offline measurement: every per-sample gradient of a small mlp at fixed parameters, on 256 synthetic samples
// labelled by a noisy linear teacher. Steps draw their samples independently (with replacement) from these 256, so
// the truth is the population's: G their mean, tr(Sigma) their mean squared distance to it.
struct OfflineMlp {
  static constexpr int64_t kSamples = 256, kInputs = 10, kClasses = 3;
  torch::Tensor x, y;
  torch::nn::Sequential mlp{nullptr};

  OfflineMlp() {
    torch::manual_seed(7);  // before the layers draw their initial parameters
    mlp = torch::nn::Sequential(torch::nn::Linear(kInputs, 16), torch::nn::Tanh(), torch::nn::Linear(16, kClasses));
    x = torch::randn({kSamples, kInputs});
    y = (x.matmul(torch::randn({kInputs, kClasses})) + 0.5 * torch::randn({kSamples, kClasses})).argmax(1);
  }
  // The gradient of the mean loss over `indices`, flattened.
  Vector gradientOf(const torch::Tensor& indices) {
    mlp->zero_grad();
    torch::nn::functional::cross_entropy(mlp->forward(x.index_select(0, indices)), y.index_select(0, indices))
        .backward();
    std::vector<torch::Tensor> flat;
    for (const auto& p : mlp->parameters()) flat.push_back(p.grad().flatten());
    const auto g = torch::cat(flat).to(torch::kDouble).contiguous();
    return Vector(g.data_ptr<double>(), g.data_ptr<double>() + g.numel());
  }
};

TEST(GradientNoiseScale, MatchesTheOfflineMeasurementOnAnMlp) {
  OfflineMlp model;
  std::vector<Vector> perSample;
  for (int64_t i = 0; i < OfflineMlp::kSamples; ++i) perSample.push_back(model.gradientOf(torch::tensor({i})));
  const size_t dim = perSample[0].size();
  Vector mean(dim, 0.0);
  for (const auto& g : perSample)
    for (size_t k = 0; k < dim; ++k) mean[k] += g[k] / OfflineMlp::kSamples;
  double traceCov = 0;
  for (const auto& g : perSample)
    for (size_t k = 0; k < dim; ++k) traceCov += (g[k] - mean[k]) * (g[k] - mean[k]) / OfflineMlp::kSamples;
  const double truth = traceCov / squaredNorm(mean);
  // The per-sample gradients are those the trainer's batches sum: their mean is the whole batch's gradient.
  const Vector whole = model.gradientOf(torch::arange(OfflineMlp::kSamples));
  for (size_t k = 0; k < dim; ++k) ASSERT_NEAR(whole[k], mean[k], 1e-5);

  // Random unequal shares over 4 workers (1 to 64 samples each), each share's mean gradient from its samples.
  auto gen = seededGenerator(21, 4);
  Vector gradSqs, traceCovs;
  for (int t = 0; t < 2000; ++t) {
    Shares shares;
    std::vector<Vector> means;
    for (int i = 0; i < 4; ++i) {
      shares.push_back(1 + static_cast<int64_t>(boundedDraw(gen, 64)));
      Vector m(dim, 0.0);
      for (int64_t j = 0; j < shares.back(); ++j) {
        const auto& g = perSample[boundedDraw(gen, OfflineMlp::kSamples)];
        for (size_t k = 0; k < dim; ++k) m[k] += g[k] / shares.back();
      }
      means.push_back(m);
    }
    const auto e = estimateNoise(normsOf(means, shares));
    ASSERT_TRUE(e);
    gradSqs.push_back(e->gradSq);
    traceCovs.push_back(e->traceCov);
  }
  const Stats estimate = ratioOf(traceCovs, gradSqs);
  const double relativeError = estimate.mean / truth - 1, relativeStdError = estimate.stdError / truth;
  std::printf(
      "offline: %zu parameters, |G|^2 %.5f, tr(Sigma) %.4f, B_noise %.2f; estimated %.2f: relative error "
      "%+.2f%% (standard error %.2f%%)\n",
      dim, squaredNorm(mean), traceCov, truth, estimate.mean, 100 * relativeError, 100 * relativeStdError);
  // Unbiased, so the error is noise: within 4 standard errors, computed from the estimates themselves. The run
  // is long enough that those 4 standard errors are under 10%: a bias of 10% or more would fail.
  EXPECT_LT(std::abs(relativeError), 4 * relativeStdError);
  EXPECT_LT(4 * relativeStdError, 0.10);
}

TEST(GradientNoiseScale, RejectsWhatCannotBeEstimated) {
  EXPECT_FALSE(estimateNoise({64, 1, 2.0, 1.0}));           // one worker
  EXPECT_FALSE(estimateNoise({2, 3, 2.0, 1.0}));            // fewer samples than workers
  EXPECT_FALSE(estimateNoise({64, 4, std::nan(""), 1.0}));  // not finite
  EXPECT_FALSE(estimateNoise({64, 4, 2.0, INFINITY}));
  EXPECT_FALSE(estimateNoise({64, 4, -1.0, 1.0}));  // a squared norm < 0
  const auto e = estimateNoise({4, 4, 3.0, 1.0});   // one sample each is enough
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->traceCov, 2.0 * 4 / 3);
  EXPECT_DOUBLE_EQ(e->gradSq, 1.0 - 2.0 / 3);

  NoiseScaleTracker tracker(0.5);
  tracker.add({64, 1, 2.0, 1.0});
  tracker.add({64, 4, std::nan(""), 1.0});
  EXPECT_FALSE(tracker.ready());
  tracker.add({4, 2, 3.0, 1.0});            // traceCov 8, gradSq -1: all noise
  EXPECT_DOUBLE_EQ(tracker.traceCov(), 8);  // bias-corrected: the first step whole
  EXPECT_DOUBLE_EQ(tracker.gradSq(), -1);
  EXPECT_EQ(tracker.noiseScale(), kUnboundedNoiseScale);
  tracker.add({4, 2, 1.5, 1.5});                        // no spread: traceCov 0, gradSq 1.5
  EXPECT_DOUBLE_EQ(tracker.traceCov(), 8 * 0.5 / 1.5);  // weights 0.25, 0.5 over 0.75
  EXPECT_DOUBLE_EQ(tracker.gradSq(), (-0.25 + 1.5 * 0.5) / 0.75);
  EXPECT_DOUBLE_EQ(tracker.noiseScale(), tracker.traceCov() / tracker.gradSq());
  EXPECT_THROW(NoiseScaleTracker(1.0), UsageError);
}

TEST(GradientNoiseScale, StateRoundTripsAndGarbageThrows) {
  NoiseScaleTracker a;
  estimateSteps({7, 50, 3}, 20, 9, &a);
  NoiseScaleTracker b(0.5);
  b.loadState(a.saveState());
  EXPECT_EQ(b.saveState(), a.saveState());
  EXPECT_EQ(b.samples(), 20);
  EXPECT_EQ(b.smoothing(), a.smoothing());
  EXPECT_EQ(b.noiseScale(), a.noiseScale());
  const GradientNormSample next{60, 3, 2.0, 1.5};
  a.add(next);
  b.add(next);
  EXPECT_EQ(b.noiseScale(), a.noiseScale());  // resumed exactly
  for (const char* garbage : {"", "not json", "[]", "{\"smoothing\": 0.9}",
                              R"({"smoothing":2,"grad_sq_sum":0,"trace_cov_sum":0,"weight":0,"samples":0})",
                              R"({"smoothing":0.9,"grad_sq_sum":0,"trace_cov_sum":0,"weight":0,"samples":3})"})
    EXPECT_THROW(b.loadState(garbage), RuntimeFailure) << garbage;
  EXPECT_EQ(b.noiseScale(), a.noiseScale());  // a failed load changes nothing
}

}  // namespace
}  // namespace balancenet::adaptive

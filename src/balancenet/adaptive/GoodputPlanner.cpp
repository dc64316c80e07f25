// GoodputPlanner: goodput of a global batch from per-worker lines and the noise scale; the candidate search.
#include "balancenet/adaptive/GoodputPlanner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/policies/BalancedPolicy.h"
#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::adaptive {

namespace {

constexpr double kInfeasible = std::numeric_limits<double>::infinity();

// The input's lines in the form minimizeMaxTime takes, built once per decision (not once per candidate).
struct Lines {
  std::vector<double> a, c;
  std::vector<int64_t> caps;
  int64_t capSum = std::numeric_limits<int64_t>::max();  // the most samples the caps hold (no cap: unbounded)
};

void validate(const GoodputInput& in) {
  auto check = [](bool ok, const char* what) {
    if (!ok) throw InternalError(std::string("goodput planner: ") + what);
  };
  check(!in.nodes.empty(), "no node");
  for (const auto& node : in.nodes)
    check(std::isfinite(node.fixedMs) && node.fixedMs >= 0 && std::isfinite(node.msPerSample) && node.msPerSample > 0,
          "a node line needs fixedMs >= 0 and msPerSample > 0");
  check(std::isfinite(in.syncMs) && in.syncMs >= 0, "syncMs must be >= 0");
  check(in.minBatch > 0 && in.minBatch <= in.maxBatch, "needs 0 < minBatch <= maxBatch");
  check(in.baseBatch > 0, "baseBatch must be > 0");
  check(in.hysteresis >= 0, "hysteresis must be >= 0");
  check(in.shares.empty() || in.shares.size() == in.nodes.size(), "one share per node");
}

Lines linesOf(const GoodputInput& in) {
  Lines lines;
  int64_t capSum = 0;
  bool capped = true;
  for (const auto& node : in.nodes) {
    lines.a.push_back(node.fixedMs);
    lines.c.push_back(node.msPerSample);
    lines.caps.push_back(node.maxBatch);
    if (node.maxBatch <= 0) capped = false;
    capSum += std::max<int64_t>(node.maxBatch, 1);
  }
  if (capped) lines.capSum = capSum;
  return lines;
}

double stepMs(const GoodputInput& in, const Lines& lines, int64_t batch) {
  const auto n = static_cast<int64_t>(in.nodes.size());
  if (batch < n || batch > lines.capSum) return kInfeasible;
  const std::vector<int64_t> split =
      in.shares.empty() ? orchestrator::BalancedPolicy::minimizeMaxTime(lines.a, lines.c, batch, lines.caps)
                        : orchestrator::apportion(in.shares, batch).sizes;
  double slowest = 0;
  for (size_t i = 0; i < split.size(); ++i) {
    if (lines.caps[i] > 0 && split[i] > lines.caps[i]) return kInfeasible;
    slowest = std::max(slowest, lines.a[i] + lines.c[i] * static_cast<double>(split[i]));
  }
  return slowest + in.syncMs;
}

GoodputChoice evaluate(const GoodputInput& in, const Lines& lines, int64_t batch) {
  GoodputChoice choice;
  choice.globalBatch = batch;
  choice.stepMs = stepMs(in, lines, batch);
  choice.efficiency = statisticalEfficiency(in.noiseScale, in.baseBatch, batch);
  choice.goodput = std::isfinite(choice.stepMs) && choice.stepMs > 0
                       ? 1000.0 * static_cast<double>(batch) / choice.stepMs * choice.efficiency
                       : 0;
  return choice;
}

// [lo, hi]: the user's [MIN, MAX] within what the workers can hold: at least one sample each, at most the caps'
// sum (memory is the harder limit: a MIN above it yields to it), and under fixed shares at most the B whose
// proportional share first overflows a cap.
std::pair<int64_t, int64_t> batchRange(const GoodputInput& in, const Lines& lines) {
  const auto n = static_cast<int64_t>(in.nodes.size());
  int64_t most = lines.capSum;
  if (!in.shares.empty()) {
    double total = 0;
    for (double w : in.shares) total += std::max(w, 0.0);
    for (size_t i = 0; i < in.shares.size() && total > 0; ++i)
      if (lines.caps[i] > 0 && in.shares[i] > 0)
        most =
            std::min(most, static_cast<int64_t>(std::floor(static_cast<double>(lines.caps[i]) * total / in.shares[i])));
  }
  most = std::max(most, n);
  return {std::clamp(in.minBatch, n, most), std::clamp(in.maxBatch, n, most)};
}

// kGridPoints geometric points over [lo, hi] (rounded, distinct, both ends included).
std::vector<int64_t> geometricGrid(int64_t lo, int64_t hi) {
  std::vector<int64_t> grid;
  const double ratio = static_cast<double>(hi) / static_cast<double>(lo);
  for (int k = 0; k < kGridPoints; ++k)
    grid.push_back(std::clamp<int64_t>(
        std::llround(static_cast<double>(lo) * std::pow(ratio, k / static_cast<double>(kGridPoints - 1))), lo, hi));
  return grid;
}

// The best of `candidates` (sorted, distinct) by goodput, ties to the smaller B; its index in *index.
GoodputChoice bestOf(const GoodputInput& in, const Lines& lines, const std::vector<int64_t>& candidates,
                     size_t* index) {
  GoodputChoice best = evaluate(in, lines, candidates.front());
  *index = 0;
  for (size_t k = 1; k < candidates.size(); ++k)
    if (GoodputChoice c = evaluate(in, lines, candidates[k]); c.goodput > best.goodput) best = c, *index = k;
  return best;
}

void sortDistinct(std::vector<int64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

double statisticalEfficiency(double noiseScale, int64_t baseBatch, int64_t batch) {
  if (baseBatch <= 0 || batch <= 0) throw InternalError("statisticalEfficiency needs positive batches");
  if (!(noiseScale >= 0) || std::isinf(noiseScale)) return 1;  // unknown; or all noise: every sample counts
  return (noiseScale + static_cast<double>(baseBatch)) / (noiseScale + static_cast<double>(batch));
}

double predictedStepMs(const GoodputInput& in, int64_t batch) {
  validate(in);
  return stepMs(in, linesOf(in), batch);
}

// The search: goodput(B) = B / step(B) x E(B) rises while the sync and fixed costs are being amortised and
// falls once the efficiency loss outweighs that, but the integer split makes step(B) a staircase, so no
// derivative is trusted: a geometric grid of kGridPoints over [lo, hi] (both included), then kRefinePoints
// evenly between the best grid point's neighbours (every integer there when they are close); the B in force
// competes with the winner under the hysteresis. About 50 evaluations of minimizeMaxTime in all.
GoodputChoice chooseGlobalBatch(const GoodputInput& in) {
  validate(in);
  const Lines lines = linesOf(in);
  const auto [lo, hi] = batchRange(in, lines);
  const int64_t current = std::clamp(in.currentBatch > 0 ? in.currentBatch : lo, lo, hi);
  GoodputChoice now = evaluate(in, lines, current);
  if (!(in.noiseScale >= 0)) {  // do not grow B blind: its only gain would be throughput
    now.note = fmt::format("noise scale unknown: keeping B={}", current);
    return now;
  }
  std::vector<int64_t> grid = geometricGrid(lo, hi);
  sortDistinct(grid);
  size_t at = 0;
  GoodputChoice best = bestOf(in, lines, grid, &at);
  const int64_t left = grid[at > 0 ? at - 1 : at], right = grid[at + 1 < grid.size() ? at + 1 : at];
  std::vector<int64_t> fine;
  for (int k = 1; k <= kRefinePoints && right - left > 1; ++k)
    fine.push_back(left + (right - left) * k / (kRefinePoints + 1));
  if (!fine.empty()) {
    sortDistinct(fine);
    size_t unused = 0;
    if (GoodputChoice refined = bestOf(in, lines, fine, &unused); refined.goodput > best.goodput) best = refined;
  }
  if (best.goodput <= 0) {
    now.note = fmt::format("no B in [{}, {}] fits the caps: keeping B={}", lo, hi, current);
    return now;
  }
  const std::string why = fmt::format(
      "noise scale {:.0f}: B={} predicts {:.0f} samples/s (step {:.1f} ms, "
      "efficiency {:.2f})",
      in.noiseScale, best.globalBatch, best.goodput, best.stepMs, best.efficiency);
  // The B in force is a candidate too, but only here: the search itself does not depend on it.
  if (best.globalBatch != current && now.goodput > 0 && best.goodput <= now.goodput * (1 + in.hysteresis)) {
    now.note = fmt::format("keeping B={} ({:.0f} samples/s): {}, within the {:.0f}% hysteresis", current, now.goodput,
                           why, 100 * in.hysteresis);
    return now;
  }
  best.note = why;
  return best;
}

}  // namespace balancenet::adaptive

// BalancedPolicy: fitted per-node cost models, exact min-max integer split, caps, hysteresis.
#include "balancenet/orchestrator/policies/BalancedPolicy.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/core/Median.h"
#include "balancenet/orchestrator/policies/LeaveOut.h"
#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

BalancedPolicy::BalancedPolicy(BalancedOptions options) : options_(options) {
  auto check = [](bool ok, const char* what) {
    if (!ok) throw UsageError(std::string("balanced policy: ") + what);
  };
  check(options_.smoothing > 0 && options_.smoothing <= 1, "smoothing must be in (0, 1]");
  check(options_.hysteresis >= 0 && options_.hysteresis < 1, "hysteresis must be in [0, 1)");
  check(options_.noiseMultiplier >= 0, "noise multiplier must be >= 0");
  check(options_.reactThreshold > 0, "react threshold must be > 0");
  check(options_.reactResidual >= 0, "react residual must be >= 0");
  check(options_.historyPoints >= 1, "history must keep at least 1 point");
  check(options_.minFitSpread >= 0 && options_.minFitSpread < 1, "fit spread must be in [0, 1)");
  check(options_.maxFixedCostFraction >= 0 && options_.maxFixedCostFraction < 1,
        "fixed-cost fraction must be in [0, 1)");
}

std::string BalancedPolicy::saveState() const {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : models_) models.push_back(m.toJson());
  return nlohmann::json{{"models", models}, {"hand_over_ms", handOverMs_}}.dump();
}

void BalancedPolicy::loadState(const std::string& state) {
  if (state.empty()) return;
  try {
    // Checkpoints before leave-out hold the models' array alone.
    const auto j = nlohmann::json::parse(state);
    const auto& list = j.is_array() ? j : j.at("models");
    std::vector<NodeCostModel> models;
    for (const auto& m : list) models.push_back(NodeCostModel::fromJson(m));
    models_ = std::move(models);
    handOverMs_ = j.is_array() ? 0.0 : j.value("hand_over_ms", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(fmt::format("balanced policy state unreadable: {}", e.what()));
  }
}

namespace {

// How many samples node i holds when it takes every sample whose time a_i + c_i k (k >= 2: the first is
// given) is below `level`, within its cap: the count the greedy reaches before any time >= level. The
// same expression as the greedy's: the guess from the reciprocal of c (a multiplication costs far less than
// a division, and this runs for every node at every level tried) is corrected where it rounded the other
// way; since a + c k increases with k, the count is that of the comparisons, whatever the guess.
int64_t samplesBelow(double a, double c, double inverseC, int64_t cap, double level) {
  auto time = [&](int64_t k) { return a + c * static_cast<double>(k); };
  const double guess = std::floor((level - a) * inverseC);
  int64_t k = guess < 1 ? 1 : guess > 4e18 ? int64_t{4000000000000000000} : static_cast<int64_t>(guess);
  if (cap > 0) k = std::min(k, cap);
  while (k > 1 && time(k) >= level) --k;
  while ((cap <= 0 || k < cap) && time(k + 1) < level) ++k;
  return k;
}

// The nodes' time lines a_i + c_i k within their caps (caps_i <= 0 or caps empty: no cap).
struct TimeLines {
  TimeLines(const std::vector<double>& a, const std::vector<double>& c, const std::vector<int64_t>& caps)
      : a(a), c(c), caps(caps), inverseC(a.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      inverseC[i] = 1 / c[i];
      rate += inverseC[i];
    }
  }
  size_t size() const { return a.size(); }
  int64_t capOf(size_t i) const { return caps.empty() ? int64_t{0} : caps[i]; }
  // Node i's samples below `level` (samplesBelow).
  int64_t below(size_t i, double level) const { return samplesBelow(a[i], c[i], inverseC[i], capOf(i), level); }
  // All nodes' samples below `level`.
  int64_t countBelow(double level) const {
    int64_t count = 0;
    for (size_t i = 0; i < size(); ++i) count += below(i, level);
    return count;
  }

  const std::vector<double>& a;
  const std::vector<double>& c;
  const std::vector<int64_t>& caps;
  std::vector<double> inverseC;
  double rate = 0;  // the cluster's rate: sum 1 / c_i
};

// A level of time, and how many samples lie below it.
struct Level {
  double ms = 0;
  int64_t below = 0;
};

// A level with at most `total` samples below it, close under the greedy's final level: where it may start.
Level startLevel(const TimeLines& lines, int64_t total) {
  const size_t n = lines.size();
  const std::vector<double>& a = lines.a;
  const std::vector<double>& c = lines.c;
  double lo = std::numeric_limits<double>::infinity(), weighted = 0, widest = 0;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, a[i] + c[i] * 2.0);  // nothing below it: every node at 1
    weighted += a[i] / c[i];
    widest = std::max(widest, c[i]);
  }
  int64_t belowLo = static_cast<int64_t>(n);
  // Start a few samples' time under the continuous water level (sum (T - a_i) / c_i = total) when the
  // count confirms it...
  const double level = (static_cast<double>(total) + weighted) / lines.rate - 2 * widest;
  if (level > lo) {
    const int64_t below = lines.countBelow(level);
    if (below <= total) lo = level, belowLo = below;
  }
  // ...then raise the level by the samples still missing at the cluster's rate sum 1/c_i, less n: the
  // floors add at most one sample a node beyond the rate, so no step overshoots `total`. A few passes
  // leave at most about n samples to the queue.
  for (int pass = 0; pass < 16 && total - belowLo > static_cast<int64_t>(n); ++pass) {
    const double next = lo + static_cast<double>(total - belowLo - static_cast<int64_t>(n)) / lines.rate;
    if (!(next > lo)) break;
    const int64_t below = lines.countBelow(next);
    if (below > total || below <= belowLo) break;  // rounding at the edge, or capped nodes: the queue goes on
    lo = next;
    belowLo = below;
  }
  return {lo, belowLo};
}

// The last stretch: `lo` and a level `hi` with more than `total` pairs below it, which bounds every
// remaining pick. No such level (the caps hold less than `total`): infinite, and every node enters the queue.
struct Stretch {
  Level lo;
  double hi = std::numeric_limits<double>::infinity();
};

// Finds `hi` by doubling, then halves (lo, hi) until it leaves the queue a few dozen samples.
Stretch lastStretch(const TimeLines& lines, int64_t total, Level lo) {
  const size_t n = lines.size();
  double hi = std::numeric_limits<double>::infinity();
  for (double width = static_cast<double>(total - lo.below + static_cast<int64_t>(n)) / lines.rate, pass = 0;
       pass < 64 && width > 0; ++pass, width *= 2) {
    if (lines.countBelow(lo.ms + width) > total) {
      hi = lo.ms + width;
      break;
    }
  }
  const int64_t enough = std::max<int64_t>(1, static_cast<int64_t>(n) / 64);
  for (int pass = 0; pass < 32 && std::isfinite(hi) && total - lo.below > enough; ++pass) {
    const double mid = lo.ms + 0.5 * (hi - lo.ms);
    if (!(mid > lo.ms && mid < hi)) break;
    const int64_t below = lines.countBelow(mid);
    (below <= total ? lo.ms : hi) = mid;
    if (below <= total) lo.below = below;
  }
  return {lo, hi};
}

// The greedy from every node's samples below `stretch.lo` (or 1): each further sample to the node whose
// time after taking it is the smallest. Only nodes whose next time is below `stretch.hi` enter its queue
// (a heap of all n nodes cost more than everything before it).
std::vector<int64_t> greedyFrom(const TimeLines& lines, int64_t total, const Stretch& stretch) {
  const size_t n = lines.size();
  const std::vector<double>& a = lines.a;
  const std::vector<double>& c = lines.c;
  std::vector<int64_t> b(n, 1);
  if (stretch.lo.below > static_cast<int64_t>(n))
    for (size_t i = 0; i < n; ++i) b[i] = lines.below(i, stretch.lo.ms);
  auto hasRoom = [&](size_t i) { return lines.capOf(i) <= 0 || b[i] < lines.capOf(i); };
  using Entry = std::pair<double, size_t>;  // (time after one more sample, rank): the pair order breaks ties by rank
  std::vector<Entry> candidates;
  int64_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    given += b[i];
    const double nextMs = a[i] + c[i] * static_cast<double>(b[i] + 1);
    if (hasRoom(i) && nextMs < stretch.hi) candidates.push_back({nextMs, i});
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> next(std::greater<Entry>(),
                                                                           std::move(candidates));
  for (; given < total && !next.empty(); ++given) {
    const size_t i = next.top().second;
    next.pop();
    ++b[i];
    if (hasRoom(i)) next.push({a[i] + c[i] * static_cast<double>(b[i] + 1), i});
  }
  return b;
}

}  // namespace

std::vector<int64_t> BalancedPolicy::minimizeMaxTime(const std::vector<double>& a, const std::vector<double>& c,
                                                     int64_t total, const std::vector<int64_t>& caps) {
  // The greedy hands out the samples one at a time in increasing order of the time they bring (ties to
  // the lower rank); since each node's times increase with k, what it ends with is the `total - n`
  // smallest of all (time, rank) pairs. Every pair below a level `lo` with at most that many below it is
  // among them, so the greedy may start from them, and its queue hands out only what is left: O(n log n)
  // in all instead of the queue's O(B log n) from b = 1.
  if (a.empty()) return {};
  const TimeLines lines(a, c, caps);
  const Level lo = startLevel(lines, total);
  return greedyFrom(lines, total, lastStretch(lines, total, lo));
}

double BalancedPolicy::windowNoise(const NodeMetrics& node) {
  // The window's steps at the batch in force: same work, so spread = noise (two passes, no copy).
  auto counts = [&](const std::pair<int64_t, double>& step) {
    return step.first == node.batch && std::isfinite(step.second) && step.second > 0;
  };
  double count = 0, mean = 0, var = 0;
  for (const auto& step : node.recent)
    if (counts(step)) count += 1, mean += step.second;
  if (count < 3) return -1;
  mean /= count;
  for (const auto& step : node.recent)
    if (counts(step)) var += (step.second - mean) * (step.second - mean);
  var /= count - 1;
  return std::sqrt(var) / mean / std::sqrt(count);
}

namespace {

double medianNoise(std::vector<double>& errors) {  // reorders `errors`
  if (errors.empty()) return 0;
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  return errors[errors.size() / 2];
}

}  // namespace

double BalancedPolicy::measurementNoise(const PolicyInput& input) {
  std::vector<double> errors;
  for (const auto& node : input.nodes)
    if (const double e = windowNoise(node); e >= 0) errors.push_back(e);
  return medianNoise(errors);
}

Decision BalancedPolicy::decide(const PolicyInput& input) {
  const std::string events = absorbWindows(input);
  const CostLines lines = costLines(input);
  const Candidate best = keepMembers(optimise(lines, input), lines, input);
  Decision decision = keepOrMove(best, lines, input, events);
  if (lines.leaveOut) {
    std::vector<int> out;
    for (int r = 0; r < decision.split.worldSize(); ++r)
      if (decision.split.batches[r] == 0) out.push_back(r);
    if (lines.handOverMs > 0) decision.note += fmt::format("; hand-over {:.3g} ms a client", lines.handOverMs);
    // Also before any hand-over is measured: a host whose own work outlasts the others' step is out with none.
    if (!out.empty()) decision.note += fmt::format("; left out: {}", fmt::join(out, " "));
  }
  return decision;
}

std::string BalancedPolicy::absorbWindows(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  if (static_cast<int>(models_.size()) != n) models_.assign(n, NodeCostModel{});
  const int measured = std::min<int>(n, static_cast<int>(input.nodes.size()));

  // Each node's window is judged against what the same window did to the others (a machine-wide slowdown
  // moves nothing).
  std::string events;
  std::vector<bool> fresh(n, false);
  // The windows' points and deviations go into buffers kept from one decision to the next.
  auto& windows = scratch_.windows;
  auto& deviations = scratch_.deviations;
  auto& sorted = scratch_.sorted;
  if (windows.size() < static_cast<size_t>(measured)) windows.resize(measured);
  deviations.resize(measured);
  // Each node's window noise too, for keepOrMove, while its window is in the cache (a pass of its own over
  // 4,096 nodes' windows cost a tenth of the decision).
  scratch_.noises.clear();
  for (int i = 0; i < measured; ++i) {
    NodeCostModel::windowPoints(input.nodes[i], windows[i], scratch_.times);
    deviations[i] = models_[i].deviation(windows[i]);
    if (const double e = windowNoise(input.nodes[i]); e >= 0) scratch_.noises.push_back(e);
  }
  // The median of the others' deviations, for every node: one sorted list of all of them, and each node's
  // median read from it as if its own entry were removed (O(N log N); a median per node over the others,
  // rebuilt for each, was O(N^2): most of the 166 ms a decision took at 4,096 nodes).
  sorted.clear();
  for (double d : deviations)
    if (d > 0) sorted.push_back(d);
  std::sort(sorted.begin(), sorted.end());
  auto medianOfOthers = [&](double own) {
    const size_t skip = own > 0
                            ? static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), own) - sorted.begin())
                            : sorted.size();
    const size_t count = own > 0 ? sorted.size() - 1 : sorted.size();
    if (count == 0) return 1.0;
    auto at = [&](size_t k) { return sorted[k < skip ? k : k + 1]; };
    const size_t mid = count / 2;
    return count % 2 ? at(mid) : 0.5 * (at(mid - 1) + at(mid));
  };
  for (int i = 0; i < measured; ++i) {
    fresh[i] = !windows[i].empty();
    const double commonMode = medianOfOthers(deviations[i]);
    const double ratio = models_[i].absorb(windows[i], options_, commonMode);
    if (ratio > 0)
      events += fmt::format("; rank {} refit (observed {:.2f}x its model, the others {:.2f}x)", i, ratio, commonMode);
  }
  // Nodes with a fixed-cost fit first, so that nodes seen at a single batch size can borrow the smallest
  // fixed-cost fraction they show.
  std::vector<CostLine>& fits = scratch_.fits;  // each a least-squares fit of the history: once per node
  fits.resize(n);
  for (int i = 0; i < n; ++i) fits[i] = models_[i].fitHistory(options_);
  for (int i = 0; i < n; ++i)
    if (fresh[i] && fits[i].fitted) models_[i].refit(fits[i], options_);
  double fraction = options_.maxFixedCostFraction;
  bool anyFixedCostFit = false;
  for (int i = 0; i < n; ++i) {
    if (models_[i].hasModel() && fits[i].fitted) {
      fraction = std::min(fraction, models_[i].fixedFraction());
      anyFixedCostFit = true;
    }
  }
  if (!anyFixedCostFit) fraction = 0;  // no evidence of a fixed cost anywhere: the proportional model
  for (int i = 0; i < n; ++i)
    if (fresh[i] && !fits[i].fitted) models_[i].refit(fits[i].oneSize(fraction), options_);
  return events;
}

double BalancedPolicy::handOverMs(const PolicyInput& input) {
  // clientsServed counts only clients that handed a gradient over: a window without one (nobody offloaded, or only
  // left-out clients) measured no hand-over, and the last one measured stands.
  double serving = 0, served = 0;
  for (const auto& node : input.nodes) serving += node.servingMs, served += node.clientsServed;
  if (served > 0) handOverMs_ = serving / served;
  return handOverMs_;
}

BalancedPolicy::CostLines BalancedPolicy::costLines(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  const int measured = std::min<int>(n, static_cast<int>(input.nodes.size()));
  CostLines lines{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), "measured"};
  auto& a = lines.a;
  auto& c = lines.c;
  auto& basis = lines.basis;
  if (options_.leaveOut) {
    lines.leaveOut = true;
    lines.offloadBelow = options_.offloadBelow;
    lines.handOverMs = handOverMs(input);
  }
  double sumA = 0, sumC = 0;
  int modelled = 0;
  for (int i = 0; i < n; ++i) {
    if (!models_[i].hasModel()) continue;
    a[i] = models_[i].a();
    c[i] = models_[i].c();
    sumA += a[i];
    sumC += c[i];
    ++modelled;
  }
  // Every rank's own work around its compute is a fixed cost of its step whatever its share: part of a_i (fitted
  // into the compute line, at a small share it would read as a slow sample, and a host that got fast again would not
  // win its share back).
  // With leave-out, serving clients is each split's own (its plan's clients times handOverMs), not the window's.
  const auto addOwnWork = [&] {
    for (int i = 0; i < measured; ++i)
      lines.a[i] += input.nodes[i].ownMs - (lines.leaveOut ? input.nodes[i].servingMs : 0.0);
  };
  if (modelled == 0) {
    bool allOps = measured == n;
    for (int i = 0; i < measured; ++i)
      allOps = allOps && std::isfinite(input.nodes[i].opsPerSecond) && input.nodes[i].opsPerSecond > 0;
    for (int i = 0; i < n; ++i) c[i] = allOps ? 1.0 / input.nodes[i].opsPerSecond : 1.0;
    basis = allOps ? "opsPerSecond, no step measured" : "nothing measured, equal speeds";
    addOwnWork();
    return lines;
  }
  for (int i = 0; i < n; ++i) {
    if (models_[i].hasModel()) continue;
    a[i] = sumA / modelled;
    c[i] = sumC / modelled;
  }
  addOwnWork();
  return lines;
}

std::vector<int64_t> BalancedPolicy::capsOf(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  std::vector<int64_t> caps(n, 0);
  for (int i = 0; i < std::min<int>(n, static_cast<int>(input.nodes.size())); ++i) caps[i] = input.nodes[i].maxBatch;
  return caps;
}

double BalancedPolicy::CostLines::predictedMs(const Split& s) const {
  if (leaveOut) return predictedWithHandOvers({a, c, {}}, s.batches, offloadBelow, handOverMs);
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, a[i] + c[i] * static_cast<double>(s.batches[i]));
  return worst;
}

BalancedPolicy::Candidate BalancedPolicy::optimise(const CostLines& lines, const PolicyInput& input) {
  const int64_t total = input.globalBatch;
  const std::vector<int64_t> caps = capsOf(input);
  bool capsInfeasible = true;
  int64_t capSum = 0;
  for (int64_t cap : caps) {
    capsInfeasible = capsInfeasible && cap > 0;
    capSum += std::max<int64_t>(cap, 1);
  }
  capsInfeasible = capsInfeasible && capSum < total;
  Candidate best;
  if (capsInfeasible) {  // every node at its cap and the excess by speed
    std::vector<double> speed(lines.c.size());
    for (size_t i = 0; i < speed.size(); ++i) speed[i] = 1.0 / lines.c[i];
    best.split.batches = apportion(speed, total, caps).sizes;
    best.capsInfeasible = true;
    best.capNote =
        fmt::format("; maxBatch caps hold only {} of B = {}: all at their cap, the rest by speed", capSum, total);
  } else if (lines.leaveOut) {
    best.split.batches = chooseMembers({lines.a, lines.c, caps}, total, lines.offloadBelow, lines.handOverMs).batches;
  } else {
    best.split.batches = minimizeMaxTime(lines.a, lines.c, total, caps);
  }
  best.ms = lines.predictedMs(best.split);
  return best;
}

double BalancedPolicy::moveThreshold() {
  return std::max(options_.hysteresis, options_.noiseMultiplier * medianNoise(scratch_.noises));
}

BalancedPolicy::Candidate BalancedPolicy::keepMembers(Candidate best, const CostLines& lines,
                                                      const PolicyInput& input) {
  // A change of who is in must pay for itself, apart from any rebalancing among those who stay: on a busy machine a
  // move among the fast workers (gaining 30%) once brought the slow one back with it for a predicted 0.3%, and it
  // went out again a decision later. By the hysteresis alone, not the noise: the move as a whole still has to beat
  // the noise (keepOrMove), and a host given its CPU back (25% of the step at four hosts) stayed out for 60 steps of
  // a busy machine whose noise threshold was 20-35%.
  const Split& current = input.current;
  if (!lines.leaveOut || best.capsInfeasible || current.worldSize() != static_cast<int>(lines.a.size()) ||
      current.total() != input.globalBatch)
    return best;
  std::vector<bool> in(lines.a.size()), bestIn(lines.a.size());
  for (size_t r = 0; r < in.size(); ++r) in[r] = current.batches[r] > 0, bestIn[r] = best.split.batches[r] > 0;
  if (in == bestIn) return best;
  const auto same =
      bestSplitOver({lines.a, lines.c, capsOf(input)}, in, input.globalBatch, lines.offloadBelow, lines.handOverMs);
  if (same.ms <= 0 || 1 - best.ms / same.ms > options_.hysteresis) return best;
  best.split.batches = same.batches;
  best.ms = lines.predictedMs(best.split);
  return best;
}

Decision BalancedPolicy::keepOrMove(const Candidate& best, const CostLines& lines, const PolicyInput& input,
                                    const std::string& events) {
  // Hysteresis applies against the split in force only when it is still a valid split of B within the caps.
  const int n = worldSizeOf(input);
  const std::vector<int64_t> caps = capsOf(input);
  const Split& current = input.current;
  bool currentValid = current.worldSize() == n && current.total() == input.globalBatch;
  for (int i = 0; currentValid && i < n; ++i)
    currentValid = current.batches[i] >= (options_.leaveOut ? 0 : 1) && (caps[i] <= 0 || current.batches[i] <= caps[i]);
  if (!currentValid || best.capsInfeasible)
    return {best.split,
            fmt::format("balanced: predicted {:.4g} ms ({}){}{}", best.ms, lines.basis, events, best.capNote)};
  const double currentMs = lines.predictedMs(current);
  const double gain = currentMs > 0 ? 1 - best.ms / currentMs : 0;
  const double threshold = moveThreshold();
  if (gain <= threshold)
    return {current, fmt::format("balanced: kept, predicted {:.4g} ms, best {:.4g} ms (gain {:.1f}% <= {:.1f}%; {}){}",
                                 currentMs, best.ms, 100 * gain, 100 * threshold, lines.basis, events)};
  return {best.split, fmt::format("balanced: predicted {:.4g} ms, was {:.4g} ms (gain {:.1f}%; {}){}{}", best.ms,
                                  currentMs, 100 * gain, lines.basis, events, best.capNote)};
}

}  // namespace balancenet::orchestrator

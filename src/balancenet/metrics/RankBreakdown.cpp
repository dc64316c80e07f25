// Per-rank medians and the rank the exchange waits for.
#include "balancenet/metrics/RankBreakdown.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "balancenet/core/Median.h"

namespace balancenet::metrics {
namespace {

// A wait below this fraction of the step is noise, not a rank holding the others.
constexpr double kHeldShare = 0.1;

}  // namespace

RankBreakdown breakdownByRank(const StepTable& table) {
  RankBreakdown out;
  const auto& records = table.records();
  if (records.empty()) return out;
  const int64_t first = records.front().step, last = records.back().step;
  out.fromStep = first + (last - first + 1) / 2;  // the second half: past the trials and the first decisions
  out.toStep = last;
  struct Columns {
    std::vector<double> batch, compute, own, sync, wait, throttled, step;
  };
  std::map<int, Columns> byRank;
  for (const auto& r : records) {
    if (r.step < out.fromStep || r.stage != 0) continue;
    auto& c = byRank[r.rank];
    c.batch.push_back(static_cast<double>(r.batch));
    c.compute.push_back(r.computeMs);
    c.own.push_back(r.ownMs);
    c.sync.push_back(r.syncMs);
    c.wait.push_back(table.waitMs(r));
    c.throttled.push_back(r.throttledMs);
    c.step.push_back(r.updateMs);
  }
  for (auto& [rank, c] : byRank)
    out.ranks.push_back({rank, median(c.batch), median(c.compute), median(c.own), median(c.sync), median(c.wait),
                         median(c.throttled), median(c.step)});
  if (out.ranks.size() < 2) return out;
  const auto least = std::min_element(out.ranks.begin(), out.ranks.end(),
                                      [](const RankTimes& a, const RankTimes& b) { return a.waitMs < b.waitMs; });
  std::vector<double> others, steps;
  for (const auto& t : out.ranks) {
    steps.push_back(t.stepMs);
    if (t.rank != least->rank) others.push_back(t.waitMs);
  }
  const double longest = *std::max_element(others.begin(), others.end());
  if (longest > kHeldShare * median(steps)) {
    out.heldBy = least->rank;
    out.othersWaitMs = median(others);
  }
  return out;
}

std::string describe(const RankBreakdown& b) {
  std::string text = fmt::format("per rank, medians of steps {}-{} (ms a step):", b.fromStep, b.toStep);
  for (const auto& t : b.ranks)
    text += fmt::format(
        "\n  rank {}: {:g} samples, compute {:.1f}, own work {:.1f}, sync {:.1f} (waiting {:.1f}), "
        "throttled {:.1f}, step {:.1f}",
        t.rank, t.batch, t.computeMs, t.ownMs, t.syncMs, t.waitMs, t.throttledMs, t.stepMs);
  if (b.heldBy >= 0)
    text += fmt::format("\n  the exchange waits for rank {}: the others wait {:.1f} ms a step (median)", b.heldBy,
                        b.othersWaitMs);
  else if (b.ranks.size() > 1)
    text += "\n  the ranks reach the exchange together (no rank waits a tenth of a step)";
  return text;
}

nlohmann::json toJson(const RankBreakdown& b) {
  auto ranks = nlohmann::json::array();
  for (const auto& t : b.ranks)
    ranks.push_back({{"rank", t.rank},
                     {"batch", t.batch},
                     {"compute_ms", t.computeMs},
                     {"own_ms", t.ownMs},
                     {"sync_ms", t.syncMs},
                     {"wait_ms", t.waitMs},
                     {"throttled_ms", t.throttledMs},
                     {"step_ms", t.stepMs}});
  return {{"from_step", b.fromStep},
          {"to_step", b.toStep},
          {"ranks", ranks},
          {"exchange_waits_for", b.heldBy >= 0 ? nlohmann::json(b.heldBy) : nlohmann::json(nullptr)},
          {"others_wait_ms", b.othersWaitMs}};
}

}  // namespace balancenet::metrics

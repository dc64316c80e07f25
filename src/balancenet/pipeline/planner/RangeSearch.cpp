// RangeSearch: the bottleneck-bound scan with a least-sum DP per bound (see RangeSearch.h for why it is
// exact). The stage times are tabulated once; each DP is O(S K^2).
#include "balancenet/pipeline/planner/RangeSearch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace balancenet::pipeline::planner {
namespace {

constexpr double kNoCut = std::numeric_limits<double>::infinity();

// t[s][first][end] for the ranges stage s can run (first >= s, end <= K - (S - 1 - s); the first stage
// starts at block 0 and the last ends at K, so data parallelism tabulates K ranges, not K^2 / 2).
class StageTable {
 public:
  explicit StageTable(const RangeProblem& p) : S_(p.stages), K_(p.blocks), t_(S_ * (K_ + 1) * (K_ + 1), kNoCut) {
    for (int s = 0; s < S_; ++s) {
      const size_t lastFirst = s == 0 ? 0 : K_ - (S_ - s);
      for (size_t first = s; first <= lastFirst; ++first)
        for (size_t end = s == S_ - 1 ? K_ : first + 1; end + (S_ - 1 - s) <= K_; ++end) {
          at(s, first, end) = p.stageMs(s, first, end);
          ++filled_;
        }
    }
  }
  double filled() const { return filled_; }
  double& at(int s, size_t first, size_t end) { return t_[(s * (K_ + 1) + first) * (K_ + 1) + end]; }
  double at(int s, size_t first, size_t end) const { return t_[(s * (K_ + 1) + first) * (K_ + 1) + end]; }
  // The least finite stage time above `bound` (+infinity when none): the scan's next bound.
  double nextAbove(double bound) const {
    double next = kNoCut;
    for (double t : t_)
      if (t > bound && t < next) next = t;
    return next;
  }

  // DP over (stage, blocks covered): the least sum of stage times with each <= bound (minimax == false),
  // or the least largest stage time (minimax == true). Fills `cut` with the partition; kNoCut if none.
  double solve(double bound, bool minimax, Partition* cut) const {
    std::vector<double> best((S_ + 1) * (K_ + 1), kNoCut);
    std::vector<size_t> from((S_ + 1) * (K_ + 1), 0);
    const auto cell = [&](int s, size_t k) { return s * (K_ + 1) + k; };
    best[cell(0, 0)] = 0;
    for (int s = 0; s < S_; ++s)
      for (size_t end = s + 1; end + (S_ - 1 - s) <= K_; ++end)
        for (size_t first = s; first < end; ++first) {
          const double before = best[cell(s, first)], t = at(s, first, end);
          if (before == kNoCut || t > bound) continue;  // t == kNoCut > any finite bound
          const double value = minimax ? std::max(before, t) : before + t;
          if (value < best[cell(s + 1, end)]) {
            best[cell(s + 1, end)] = value;
            from[cell(s + 1, end)] = first;
          }
        }
    const double result = best[cell(S_, K_)];
    if (result != kNoCut && cut) {
      cut->stages.assign(S_, {});
      for (int s = S_; s > 0; --s) {
        const size_t end = s == S_ ? K_ : cut->stages[s].first;
        cut->stages[s - 1] = {from[cell(s, end)], end};
      }
    }
    return result;
  }

  double objective(const Partition& cut, int micros) const {
    double sum = 0, slowest = 0;
    for (int s = 0; s < S_; ++s) {
      const double t = at(s, cut.stages[s].first, cut.stages[s].end);
      sum += t;
      slowest = std::max(slowest, t);
    }
    return sum + (micros - 1) * slowest;
  }

 private:
  int S_;
  size_t K_;
  std::vector<double> t_;
  double filled_ = 0;  // stageMs calls
};

void extendPartitions(size_t blocks, int stages, Partition& partial,
                      const std::function<void(const Partition&)>& visit) {
  const size_t first = partial.stages.empty() ? 0 : partial.stages.back().end;
  const int left = stages - partial.stageCount();
  if (left == 1) {
    partial.stages.push_back({first, blocks});
    visit(partial);
    partial.stages.pop_back();
    return;
  }
  for (size_t end = first + 1; end + (left - 1) <= blocks; ++end) {
    partial.stages.push_back({first, end});
    extendPartitions(blocks, stages, partial, visit);
    partial.stages.pop_back();
  }
}

}  // namespace

std::optional<RangeSolution> bestRanges(const RangeProblem& problem, int maxBounds, double maxCells) {
  if (problem.stages < 1 || problem.blocks < static_cast<size_t>(problem.stages)) return std::nullopt;
  const StageTable table(problem);
  std::optional<RangeSolution> best;
  const auto consider = [&](const Partition& cut) {
    const double objective = table.objective(cut, problem.micros);
    if (!best || objective < best->objectiveMs) best = RangeSolution{cut, objective, 0};
  };
  Partition cut;
  const double leastSum = table.solve(kNoCut, false, &cut);
  if (leastSum == kNoCut) return std::nullopt;  // no cut fits memory
  consider(cut);
  double bound = table.solve(kNoCut, true, nullptr);  // the least feasible bottleneck
  const double lowerBound = (problem.micros - 1) * bound + leastSum;
  // A bound costs a DP (S K^2 / 2 cells) and the search for the next one (the whole table, S K^2).
  const double cellsPerBound = 1.5 * problem.stages * problem.blocks * problem.blocks;
  const int affordable = static_cast<int>(std::max(1.0, maxCells / cellsPerBound));
  const int limit = maxBounds > 0 ? std::min(maxBounds, affordable) : affordable;
  int scanned = 0;
  for (; bound != kNoCut && scanned < limit; ++scanned) {
    // Any cut whose largest stage is >= bound costs at least (m - 1) bound + leastSum.
    if ((problem.micros - 1) * bound + leastSum >= best->objectiveMs) break;
    if (table.solve(bound, false, &cut) != kNoCut) consider(cut);
    bound = table.nextAbove(bound);
  }
  const bool proven = bound == kNoCut || (problem.micros - 1) * bound + leastSum >= best->objectiveMs;
  best->lowerBoundMs = lowerBound;
  best->exact = proven;
  const double dpCells = 0.5 * problem.stages * problem.blocks * problem.blocks;
  best->cells = table.filled() * problem.cellCost + 2 * dpCells + scanned * cellsPerBound;
  return best;
}

double choose(size_t n, size_t k, double cap) {
  if (k > n) return 0;
  double c = 1;
  for (size_t i = 0; i < k && c <= cap; ++i) c = c * static_cast<double>(n - i) / static_cast<double>(i + 1);
  return std::min(c, cap);
}

void forEachPartition(size_t blocks, int stages, const std::function<void(const Partition&)>& visit) {
  if (stages < 1 || blocks < static_cast<size_t>(stages)) return;
  Partition partial;
  extendPartitions(blocks, stages, partial, visit);
}

}  // namespace balancenet::pipeline::planner

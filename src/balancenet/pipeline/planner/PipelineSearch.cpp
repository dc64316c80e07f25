// PipelineSearch: for each shape (S stages x R replicas), the slot assignment and the cut with the least
// predicted step time that fits memory.
//
// - S = 1 (data parallelism): nothing to cut, but with links the replicas' order is the all-reduce's ring:
//   searched as the replica shapes' slot assignments are.
// - R = 1 (a pure pipeline): the node order matters (a slow node belongs on a light range). Exact while
//   N! x S K^2 is small (kExactOrderCells): every order gets a cheap lower bound (the least-sum DP plus
//   (m - 1) x the least bottleneck), then orders are solved exactly (RangeSearch) best bound first until
//   the bound cannot beat the best. Beyond: a heuristic (rank order, fastest first, slowest first, then
//   first-improvement pairwise swaps within the shape's quick evaluations and half its cells), the best
//   order cut exactly (as far as the other half of its cells goes) at the end.
// - 1 < R < N: exact while (slot assignments up to column order) x (cuts) is small (kExactPredictions):
//   every one is predicted. Beyond: assignments dealt by speed plus rank order and swaps, each cut by the
//   range DP with t_s = max over replicas (lock-step) at the shares in force, shares re-balanced by
//   predict() and the cut searched again.
// The heuristics share one work budget per rankPlacements call (kPlanCells DP cells, kPlanEvaluations
// quick evaluations): each shape gets an equal part of what is left, so `--pipeline-stages auto` (every
// shape) costs about what one shape does rather than a full budget per shape. Every answer is re-evaluated
// by predict().
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/planner/CostModel.h"
#include "balancenet/pipeline/planner/Planner.h"
#include "balancenet/pipeline/planner/RangeSearch.h"

namespace balancenet::pipeline {
namespace {

using planner::CostTable;

// Measured (bench/PlannerBench.cpp) to keep one shape's exact search under about 100 ms.
constexpr double kExactOrderCells = 2e7;   // N! x S x K^2 / 2 stage-table cells over all orders
constexpr double kExactPredictions = 2e4;  // slot assignments x cuts, each one predict()
// Measured (bench/PlannerBench.cpp) to keep a whole heuristic plan, one shape or all of them, near a second
// of CPU at 64 nodes x 200 blocks.
constexpr double kPlanCells = 2e8;     // DP cells (RangeSolution::cells) of every heuristic together
constexpr int kPlanEvaluations = 400;  // quick evaluations (swaps tried) of every heuristic together
constexpr int kQuickBounds = 2;        // bottleneck bounds a quick evaluation scans
constexpr int kShareRounds = 3;        // cut, re-balance, cut again

// A shape's share of the plan's work and what its search has spent of it.
struct Work {
  double budget = 0;  // cells
  int evaluations = 0;
  double spent = 0;
  int evaluated = 0;
  double left() const { return std::max(0.0, budget - spent); }
};

double factorial(int n, double cap) {
  double f = 1;
  for (int i = 2; i <= n && f <= cap; ++i) f *= i;
  return std::min(f, cap);
}

Placement shapeOf(const PlanInput& input, int stages, std::vector<int> slots, Partition partition) {
  Placement p;
  p.stages = stages;
  p.replicas = static_cast<int>(input.nodes.size()) / stages;
  p.microBatches = planner::plannedMicroBatches(input, stages);
  p.slotRanks = std::move(slots);
  p.partition = std::move(partition);
  return p;
}

// Better: fits first, then the lesser step.
bool better(const Placement& a, const std::optional<Placement>& b) {
  if (!b) return true;
  if (a.fits != b->fits) return a.fits;
  return a.stepMs < b->stepMs;
}

// The range problem of a slot assignment at given shares: stage s's time is the slowest of its replicas.
planner::RangeProblem rangeProblem(const CostTable& table, int stages, const std::vector<int>& slots,
                                   const std::vector<int64_t>& shares, int plannedM) {
  planner::RangeProblem problem;
  problem.stages = stages;
  problem.blocks = table.blocks();
  const int replicas = static_cast<int>(shares.size());
  problem.cellCost = replicas;
  std::vector<int> micros(replicas);
  std::vector<double> u(replicas);
  std::vector<int64_t> largest(replicas);
  for (int j = 0; j < replicas; ++j) {
    micros[j] = static_cast<int>(std::min<int64_t>(plannedM, shares[j]));
    u[j] = static_cast<double>(shares[j]) / micros[j];
    largest[j] = (shares[j] + micros[j] - 1) / micros[j];
    problem.micros = std::max(problem.micros, micros[j]);
  }
  const ScheduleKind kind = table.input().schedule;
  problem.stageMs = [&table, stages, slots, micros, u, largest, kind](int s, size_t first, size_t end) {
    double slowest = 0;
    for (size_t j = 0; j < micros.size(); ++j) {
      const int node = slots[j * stages + s], next = s + 1 < stages ? slots[j * stages + s + 1] : -1;
      if (!table.fits(node, first, end, largest[j], planner::inFlightMicroBatches(kind, s, stages, micros[j])))
        return std::numeric_limits<double>::infinity();
      slowest = std::max(slowest, table.stageMs(node, next, first, end, u[j]));
    }
    return slowest;
  };
  return problem;
}

std::vector<int64_t> equalShares(int64_t total, int columns) {
  std::vector<int64_t> shares(columns, total / columns);
  for (int j = 0; j < total % columns; ++j) ++shares[j];
  return shares;
}

// A slot assignment's best cut: the range DP at equal shares, then at the shares predict() balances for
// the cut found, a few rounds (exact in one round for one replica, whose share is the whole batch). A scan
// (maxBounds 0) shares what `work` has left among its rounds; quick evaluations only count their cells.
std::optional<Placement> cutSlots(const PlanInput& input, const CostTable& table, int stages,
                                  const std::vector<int>& slots, int maxBounds, Work& work) {
  const int replicas = static_cast<int>(input.nodes.size()) / stages;
  const int plannedM = planner::plannedMicroBatches(input, stages);
  const int rounds = replicas == 1 ? 1 : kShareRounds;
  std::vector<int64_t> shares = equalShares(input.globalBatch, replicas);
  std::optional<Placement> best;
  for (int round = 0; round < rounds; ++round) {
    const auto problem = rangeProblem(table, stages, slots, shares, plannedM);
    const double maxCells = maxBounds > 0 ? planner::kExactScanCells : work.left() / (rounds - round);
    const auto cut = planner::bestRanges(problem, maxBounds, maxCells);
    // No cut fits: the stage table was still built.
    work.spent += cut ? cut->cells : 0.5 * stages * replicas * static_cast<double>(table.blocks() * table.blocks());
    if (!cut) break;
    Placement p = predict(input, shapeOf(input, stages, slots, cut->partition));
    p.method = cut->exact ? "exact" : "heuristic";
    shares = p.shares;
    if (better(p, best)) best = std::move(p);
  }
  return best;
}

double totalMs(const CostTable& table, int node) { return table.computeMs(node, 0, table.blocks()); }

// First-improvement pairwise swaps of slots from each start (every start is evaluated), within
// the evaluations and half the cells of `work`; the other half goes to cutting the best assignment exactly.
std::optional<Placement> swapSearch(const PlanInput& input, const CostTable& table, int stages,
                                    std::vector<std::vector<int>> starts, Work& work) {
  const int n = static_cast<int>(input.nodes.size());
  const double swapCells = work.spent + work.left() / 2;
  const auto affordable = [&] { return work.evaluated < work.evaluations && work.spent < swapCells; };
  std::optional<Placement> best;
  for (auto& slots : starts) {
    auto current = cutSlots(input, table, stages, slots, kQuickBounds, work);
    ++work.evaluated;
    if (!current) continue;
    for (bool improved = true; improved && affordable();) {
      improved = false;
      for (int a = 0; a < n && !improved && affordable(); ++a)
        for (int b = a + 1; b < n && !improved && affordable(); ++b) {
          std::swap(slots[a], slots[b]);
          auto candidate = cutSlots(input, table, stages, slots, kQuickBounds, work);
          ++work.evaluated;
          if (candidate && better(*candidate, current)) {
            current = std::move(candidate);
            improved = true;
          } else {
            std::swap(slots[a], slots[b]);
          }
        }
    }
    if (better(*current, best)) best = std::move(current);
  }
  if (!best) return best;
  auto exact = cutSlots(input, table, stages, best->slotRanks, 0, work);  // the chosen assignment, cut exactly
  if (exact && better(*exact, best)) best = std::move(exact);
  best->method = "heuristic";
  return best;
}

std::vector<std::vector<int>> heuristicStarts(const CostTable& table, int stages) {
  const int n = table.nodes();
  std::vector<int> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<int> fastFirst = ranks;
  std::stable_sort(fastFirst.begin(), fastFirst.end(),
                   [&](int a, int b) { return totalMs(table, a) < totalMs(table, b); });
  const int replicas = n / stages;
  // Dealt by speed: the fastest R nodes are stage 0's replicas, the next R stage 1's, ...; each column gets
  // one node of every speed rank, so the columns are alike.
  std::vector<int> dealt(n), dealtReverse(n);
  for (int i = 0; i < n; ++i) {
    const int stage = i / replicas, column = i % replicas;
    dealt[column * stages + stage] = fastFirst[i];
    dealtReverse[column * stages + (stages - 1 - stage)] = fastFirst[i];
  }
  return {ranks, dealt, dealtReverse};
}

// Pure pipeline, exact: every node order, best lower bound first.
std::optional<Placement> exactOrders(const PlanInput& input, const CostTable& table) {
  const int n = table.nodes();
  const int plannedM = planner::plannedMicroBatches(input, n);
  const std::vector<int64_t> whole{input.globalBatch};
  struct Bounded {
    double bound;
    std::vector<int> order;
  };
  std::vector<Bounded> orders;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  do {
    const auto problem = rangeProblem(table, n, order, whole, plannedM);
    const auto quick = planner::bestRanges(problem, 1);
    if (quick) orders.push_back({quick->lowerBoundMs, order});
  } while (std::next_permutation(order.begin(), order.end()));
  std::sort(orders.begin(), orders.end(), [](const Bounded& a, const Bounded& b) { return a.bound < b.bound; });
  std::optional<Placement> best;
  bool proven = true;
  for (const auto& candidate : orders) {
    if (best && best->fits && candidate.bound >= best->stepMs) break;  // no later order can do better
    const auto cut = planner::bestRanges(rangeProblem(table, n, candidate.order, whole, plannedM), 0);
    Placement p = predict(input, shapeOf(input, n, candidate.order, cut->partition));
    proven = proven && cut->exact;
    if (better(p, best)) best = std::move(p);
  }
  if (best) best->method = proven ? "exact" : "heuristic";
  return best;
}

// Replicas (or fixed slots), exact: every slot assignment (up to a rotation of the columns) and every
// cut, each predicted.
std::optional<Placement> exhaustive(const PlanInput& input, int stages, const std::vector<std::vector<int>>& slotSets) {
  std::optional<Placement> best;
  for (const auto& slots : slotSets)
    planner::forEachPartition(input.blocks.size(), stages, [&](const Partition& cut) {
      Placement p = predict(input, shapeOf(input, stages, slots, cut));
      if (better(p, best)) best = std::move(p);
    });
  if (best) best->method = "exact";
  return best;
}

// Slot assignments with rank 0 in column 0: rotating the columns changes neither the columns nor the
// replicas' rings (the column order is the ring order of the all-reduce, which links make matter).
std::vector<std::vector<int>> assignmentsUpToRotation(int n, int stages) {
  std::vector<std::vector<int>> sets;
  std::vector<int> slots(n);
  std::iota(slots.begin(), slots.end(), 0);
  do {
    if (std::find(slots.begin(), slots.begin() + stages, 0) != slots.begin() + stages) sets.push_back(slots);
  } while (std::next_permutation(slots.begin(), slots.end()));
  return sets;
}

std::optional<Placement> searchShape(const PlanInput& input, const CostTable& table, int stages,
                                     const std::vector<int>& fixedSlots, Work& work) {
  const int n = table.nodes();
  const double cap = 1e18;
  const double cuts = planner::choose(table.blocks() - 1, stages - 1, cap);
  if (!fixedSlots.empty()) {
    if (stages == n || cuts > kExactPredictions) {
      auto p = cutSlots(input, table, stages, fixedSlots, 0, work);
      if (p && stages != n) p->method = "heuristic";  // the lock-step DP approximates replicas
      return p;
    }
    return exhaustive(input, stages, {fixedSlots});
  }
  const double tableCells = static_cast<double>(stages) * table.blocks() * table.blocks() / 2;
  if (stages == n) {
    if (factorial(n, cap) * tableCells <= kExactOrderCells) return exactOrders(input, table);
    return swapSearch(input, table, stages, heuristicStarts(table, stages), work);
  }
  const double assignments = factorial(n, cap) / (n / stages);
  if (assignments * cuts <= kExactPredictions) return exhaustive(input, stages, assignmentsUpToRotation(n, stages));
  return swapSearch(input, table, stages, heuristicStarts(table, stages), work);
}

std::vector<int> shapesOf(int nodes, const PlanRequest& request) {
  if (request.stages > 0) return {request.stages};
  std::vector<int> shapes;
  for (int s = 1; s <= nodes; ++s)
    if (nodes % s == 0) shapes.push_back(s);
  return shapes;
}

}  // namespace

std::vector<Placement> rankPlacements(const PlanInput& input, const PlanRequest& request) {
  const int n = static_cast<int>(input.nodes.size());
  if (n < 1 || input.blocks.empty())
    throw InternalError(fmt::format("planning {} blocks on {} nodes", input.blocks.size(), n));
  const CostTable table(input);
  std::vector<int> shapes;
  for (int stages : shapesOf(n, request))
    // A shape the model or the batch cannot fill (fewer blocks than stages, fewer samples than columns).
    if (n % stages == 0 && table.blocks() >= static_cast<size_t>(stages) && input.globalBatch >= n / stages)
      shapes.push_back(stages);
  std::vector<Placement> ranked;
  double cellsLeft = kPlanCells;
  int evaluationsLeft = kPlanEvaluations;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int stages = shapes[i];
    if (!request.fixedSlots.empty()) Topology::placed(n, stages, request.fixedSlots);  // InternalError if not slots
    const int shapesLeft = static_cast<int>(shapes.size() - i);  // what an exact shape leaves goes on
    Work work{cellsLeft / shapesLeft, evaluationsLeft / shapesLeft};
    auto best = searchShape(input, table, stages, request.fixedSlots, work);
    cellsLeft = std::max(0.0, cellsLeft - work.spent);
    evaluationsLeft = std::max(0, evaluationsLeft - work.evaluated);
    if (best && best->fits) ranked.push_back(std::move(*best));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Placement& a, const Placement& b) { return a.stepMs < b.stepMs; });
  return ranked;
}

Placement planPlacement(const PlanInput& input, const PlanRequest& request) {
  auto ranked = rankPlacements(input, request);
  if (!ranked.empty()) return std::move(ranked.front());
  // The tightest node: the least memory cap (a node without one never blocks a placement).
  int tightest = -1;
  for (int node = 0; node < static_cast<int>(input.nodes.size()); ++node) {
    const double cap = input.nodes[node].memoryLimitBytes;
    if (cap > 0 && (tightest < 0 || cap < input.nodes[tightest].memoryLimitBytes)) tightest = node;
  }
  const std::string shape = request.stages > 0 ? fmt::format(" with --pipeline-stages {}", request.stages) : "";
  if (tightest < 0)
    throw UsageError(fmt::format("no placement of the model's {} blocks on {} nodes{} (a batch of {})",
                                 input.blocks.size(), input.nodes.size(), shape, input.globalBatch));
  throw UsageError(
      fmt::format("no placement{} fits every node's memory; the tightest is node {} with --memory-limit-mb {:.0f} (try "
                  "more stages or nodes, a smaller batch, or a larger limit)",
                  shape, tightest, input.nodes[tightest].memoryLimitBytes / (1024.0 * 1024.0)));
}

}  // namespace balancenet::pipeline

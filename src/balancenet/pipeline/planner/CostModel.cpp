// CostModel: Planner.h's step-time model (compute, activation transfers, fill and drain, replica sync,
// balanced shares, memory) and predict(), the ground truth every search is re-evaluated by.
#include "balancenet/pipeline/planner/CostModel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/MemoryEstimate.h"
#include "balancenet/pipeline/planner/Planner.h"

namespace balancenet::pipeline {
namespace {

constexpr double kPlanFloatBytes = 4;  // activations and parameters travel as float32

// Ring all-reduce of `bytes` among `ranks` (in ring order): 2 (R-1)/R of the bytes over the slowest link,
// plus 2 latencies.
double planRingAllReduceMs(const LinkCosts& links, const std::vector<int>& ranks, double bytes) {
  const auto r = static_cast<double>(ranks.size());
  if (ranks.size() < 2) return 0;
  const double sent = 2 * (r - 1) / r * bytes;
  double slowest = 0;  // without latency: it is paid per ring round, not per link
  for (size_t i = 0; i < ranks.size(); ++i)
    slowest = std::max(slowest, links.transferMs(ranks[i], ranks[(i + 1) % ranks.size()], sent) - links.latencyMs);
  return slowest + 2 * (r - 1) * links.latencyMs;
}

std::string planPlural(int count, const char* noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

}  // namespace

double LinkCosts::transferMs(int from, int to, double bytes) const {
  if (from == to || bytesPerMs.empty()) return 0;  // one node, or one machine without emulated links
  const double rate = bytesPerMs.at(from).at(to);
  // A link measured at no bandwidth would make every plan infinite; its latency alone is all we know.
  return latencyMs + (rate > 0 ? bytes / rate : 0);
}

std::string Placement::describe() const {
  return fmt::format("{} x {}, partition {}, slots {}", planPlural(stages, "stage"), planPlural(replicas, "replica"),
                     partition.str(), fmt::join(slotRanks, ","));
}

namespace planner {

int plannedMicroBatches(const PlanInput& input, int stages) {
  if (stages == 1) return 1;
  return input.microBatches > 0 ? input.microBatches : 4 * stages;
}

int inFlightMicroBatches(ScheduleKind kind, int stage, int stages, int micros) {
  if (stages == 1) return 1;
  return kind == ScheduleKind::GPipe ? micros : std::min(stages - stage, micros);
}

CostTable::CostTable(const PlanInput& input) : input_(input) {
  const size_t k = input.blocks.size();
  for (const auto& node : input.nodes) {
    if (node.forwardMs.size() != k || node.backwardMs.size() != k)
      throw InternalError(fmt::format("a node's profile has {} forward and {} backward costs for {} blocks",
                                      node.forwardMs.size(), node.backwardMs.size(), k));
    std::vector<double> prefix(k + 1, 0);
    for (size_t b = 0; b < k; ++b) prefix[b + 1] = prefix[b] + node.blockMs(b);
    msPrefix_.push_back(std::move(prefix));
  }
  paramPrefix_.assign(k + 1, 0);
  memoryPrefix_.assign(k + 1, 0);
  for (size_t b = 0; b < k; ++b) {
    paramPrefix_[b + 1] = paramPrefix_[b] + input.blocks[b].parameters;
    memoryPrefix_[b + 1] = memoryPrefix_[b] + input.blocks[b].memoryPerSampleBytes;
  }
  stateBytesPerParameter_ = stateBytesPerParameter(input.optimizer);
}

double CostTable::stageMs(int node, int next, size_t first, size_t end, double u) const {
  double ms = u * computeMs(node, first, end);
  if (next >= 0) {
    const double bytes = u * kPlanFloatBytes * static_cast<double>(input_.blocks[end - 1].outputElementsPerSample);
    ms += 2 * input_.links.transferMs(node, next, bytes);
  }
  return ms;
}

double CostTable::memoryBytes(size_t first, size_t end, int64_t microBatch, int inFlight) const {
  // estimateStageMemory's sums, from the prefixes (a test holds the two equal).
  return static_cast<double>(parameters(first, end) * stateBytesPerParameter_) +
         static_cast<double>((memoryPrefix_[end] - memoryPrefix_[first]) * microBatch * inFlight);
}

bool CostTable::fits(int node, size_t first, size_t end, int64_t microBatch, int inFlight) const {
  const double cap = input_.nodes[node].memoryLimitBytes;
  return cap <= 0 || memoryBytes(first, end, microBatch, inFlight) <= cap;
}

std::vector<int64_t> balancedShares(int64_t total, int columns, const std::function<double(int, int64_t)>& columnMs) {
  if (columns < 1 || total < columns)
    throw InternalError(fmt::format("balancing {} samples over {} columns", total, columns));
  std::vector<int64_t> shares(columns, 1);
  using Next = std::pair<double, int>;  // the column's time with one more sample, the column
  std::priority_queue<Next, std::vector<Next>, std::greater<>> queue;
  for (int j = 0; j < columns; ++j) queue.push({columnMs(j, 2), j});
  for (int64_t left = total - columns; left > 0; --left) {
    const int j = queue.top().second;
    queue.pop();
    ++shares[j];
    queue.push({columnMs(j, shares[j] + 1), j});
  }
  return shares;
}

double flushedStepMs(const std::vector<double>& stageMs, int micros) {
  double sum = 0, slowest = 0;
  for (double t : stageMs) {
    sum += t;
    slowest = std::max(slowest, t);
  }
  return sum + (micros - 1) * slowest;
}

}  // namespace planner

namespace {

void checkPlacementConsistent(const PlanInput& input, const Placement& p) {
  const int n = static_cast<int>(input.nodes.size());
  if (p.stages < 1 || p.replicas < 1 || p.stages * p.replicas != n || p.microBatches < 1 ||
      p.partition.stageCount() != p.stages || static_cast<int>(p.slotRanks.size()) != n ||
      input.globalBatch < p.replicas)
    throw InternalError(fmt::format("placement '{}' (M {}) for {} nodes and a batch of {}", p.describe(),
                                    p.microBatches, n, input.globalBatch));
  Topology::placed(n, p.stages, p.slotRanks);  // a permutation, or InternalError
  size_t expected = 0;
  for (const auto& range : p.partition.stages) {
    if (range.first != expected || range.end <= range.first)
      throw InternalError(fmt::format("partition {} of {} blocks", p.partition.str(), input.blocks.size()));
    expected = range.end;
  }
  if (expected != input.blocks.size())
    throw InternalError(fmt::format("partition {} of {} blocks", p.partition.str(), input.blocks.size()));
  if (!p.shares.empty()) {
    int64_t sum = 0;
    for (int64_t b : p.shares) sum += b;
    if (static_cast<int>(p.shares.size()) != p.replicas || sum != input.globalBatch ||
        *std::min_element(p.shares.begin(), p.shares.end()) < 1)
      throw InternalError(fmt::format("shares {} for {} replicas and a batch of {}", fmt::join(p.shares, ","),
                                      p.replicas, input.globalBatch));
  }
}

}  // namespace

Placement predict(const PlanInput& input, Placement given) {
  checkPlacementConsistent(input, given);
  const planner::CostTable table(input);
  Placement& p = given;
  const int S = p.stages;
  const int M = S == 1 ? 1 : p.microBatches;
  const auto nodeAt = [&](int s, int j) { return p.slotRanks[j * S + s]; };
  // Column j's stage times for a share b: m = min(M, b) micro-batches of u = b / m samples.
  const auto stageTimes = [&](int j, int64_t b) {
    const int m = static_cast<int>(std::min<int64_t>(M, b));
    const double u = static_cast<double>(b) / m;
    std::vector<double> t(S);
    for (int s = 0; s < S; ++s) {
      const auto& range = p.partition.stages[s];
      t[s] = table.stageMs(nodeAt(s, j), s + 1 < S ? nodeAt(s + 1, j) : -1, range.first, range.end, u);
    }
    return std::make_pair(t, m);
  };
  const auto columnMs = [&](int j, int64_t b) {
    const auto [t, m] = stageTimes(j, b);
    return planner::flushedStepMs(t, m);
  };
  if (p.shares.empty()) p.shares = planner::balancedShares(input.globalBatch, p.replicas, columnMs);

  p.syncMs = 0;
  for (int s = 0; s < S; ++s) {
    std::vector<int> ring;
    for (int j = 0; j < p.replicas; ++j) ring.push_back(nodeAt(s, j));
    const auto& range = p.partition.stages[s];
    const double bytes = kPlanFloatBytes * static_cast<double>(table.parameters(range.first, range.end));
    p.syncMs = std::max(p.syncMs, planRingAllReduceMs(input.links, ring, bytes));
  }

  double slowestColumn = 0;
  p.slotComputeMs.assign(S * p.replicas, 0);
  p.slotStageMs.assign(S * p.replicas, 0);
  p.fits = true;
  p.memoryNote.clear();
  for (int j = 0; j < p.replicas; ++j) {
    const int64_t b = p.shares[j];
    const auto [t, m] = stageTimes(j, b);
    slowestColumn = std::max(slowestColumn, planner::flushedStepMs(t, m));
    const int64_t largestMicro = (b + m - 1) / m;
    for (int s = 0; s < S; ++s) {
      const int slot = j * S + s, node = nodeAt(s, j);
      const auto& range = p.partition.stages[s];
      p.slotStageMs[slot] = t[s];
      p.slotComputeMs[slot] = static_cast<double>(b) * table.computeMs(node, range.first, range.end);
      const int inFlight = planner::inFlightMicroBatches(input.schedule, s, S, m);
      if (p.fits && !table.fits(node, range.first, range.end, largestMicro, inFlight)) {
        p.fits = false;
        p.memoryNote = fmt::format(
            "node {} (stage {}, blocks {}-{}) needs an estimated {:.1f} MiB, above its limit {:.1f} MiB", node, s,
            range.first, range.end - 1, table.memoryBytes(range.first, range.end, largestMicro, inFlight) / 1048576.0,
            input.nodes[node].memoryLimitBytes / 1048576.0);
      }
    }
  }
  p.stepMs = slowestColumn + p.syncMs;
  return given;
}

}  // namespace balancenet::pipeline

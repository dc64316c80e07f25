// BnoPolicy: equations (1)-(5) of the BalanceNet Orchestrator paper, with NaN-free degenerate cases.
#include "balancenet/orchestrator/policies/BnoPolicy.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

namespace {

double usable(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

// sum_{j=1..N} NCW_ij of equation (4), exactly from all pairs, or estimated from the probed peers.
double ncwSum(const NodeMetrics& node, int n) {
  if (node.latencyPeers.empty()) {
    auto latency = [&](int j) { return j < static_cast<int>(node.latencyMs.size()) ? usable(node.latencyMs[j]) : 0.0; };
    double maxLatency = 0;
    for (int j = 0; j < n; ++j) maxLatency = std::max(maxLatency, latency(j));
    double sum = 0;
    for (int j = 0; j < n; ++j) sum += maxLatency > 0 ? 1.0 - latency(j) / maxLatency : 1.0;  // j = i included
    return sum;
  }
  // Sampled peers (see the header): NCW_ii = 1 plus the peers' mean NCW scaled to the N - 1 other ranks.
  double maxLatency = 0, sampledSum = 0;
  int sampled = 0;
  const size_t k = std::min(node.latencyPeers.size(), node.latencyMs.size());
  for (size_t p = 0; p < k; ++p)
    if (node.latencyPeers[p] != node.rank) maxLatency = std::max(maxLatency, usable(node.latencyMs[p]));
  for (size_t p = 0; p < k; ++p) {
    if (node.latencyPeers[p] == node.rank) continue;
    sampledSum += maxLatency > 0 ? 1.0 - usable(node.latencyMs[p]) / maxLatency : 1.0;
    ++sampled;
  }
  if (sampled == 0) return n;  // nothing measured: every NCW_ij = 1, as with all latencies 0
  return 1.0 + static_cast<double>(n - 1) * sampledSum / sampled;
}

}  // namespace

std::vector<double> BnoPolicy::fractions(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  // A node without metrics takes every term's degenerate value (a blank NodeMetrics; the input is not
  // copied: at thousands of nodes the copy of every window and latency list cost more than the formula).
  const NodeMetrics blank;
  auto nodeAt = [&](int i) -> const NodeMetrics& {
    return i < static_cast<int>(input.nodes.size()) ? input.nodes[i] : blank;
  };
  double opsSum = 0, muSum = 0;
  for (int i = 0; i < n; ++i) {
    opsSum += usable(nodeAt(i).opsPerSecond);
    muSum += usable(nodeAt(i).memoryUsedBytes);
  }
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i) {
    const NodeMetrics& node = nodeAt(i);
    const double k = opsSum > 0 ? usable(node.opsPerSecond) / opsSum : 1.0 / n;            // (1)
    const double mw = 1.0 - (muSum > 0 ? usable(node.memoryUsedBytes) / muSum : 1.0 / n);  // (2)
    out[i] = (k + mw + ncwSum(node, n)) / 3.0;
  }
  return out;
}

Decision BnoPolicy::decide(const PolicyInput& input) {
  const std::vector<double> fraction = fractions(input);
  const auto b = static_cast<double>(input.globalBatch);
  Split split;
  for (double f : fraction) {
    const double x = f * b;
    // (5). The relative 1e-9 nudge keeps a product that is mathematically an integer (e.g. 4/3 * 30 = 40)
    // from flooring one lower because of binary rounding; only values within 1e-9 (relative) below an
    // integer are affected.
    split.batches.push_back(std::max<int64_t>(static_cast<int64_t>(std::floor(x + 1e-9 * std::max(1.0, x))), 1));
  }
  if (!normalize_)
    return {split, fmt::format("bno: effective global batch {} (B = {})", split.total(), input.globalBatch)};
  const Split raw = split;
  std::vector<double> weights(raw.batches.begin(), raw.batches.end());
  split.batches = apportion(weights, input.globalBatch).sizes;
  return {split, fmt::format("bno normalised from {} (sum {}) to B = {}", raw.str(), raw.total(), input.globalBatch)};
}

}  // namespace balancenet::orchestrator

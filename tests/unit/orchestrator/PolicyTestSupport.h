// Builders of PolicyInput for the policy tests, and a brute-force min-max split to check optima against.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator::testing {

// N nodes, B samples, an equal current split and no measurement.
inline PolicyInput blankInput(int n, int64_t b, int64_t step = 0) {
  PolicyInput in;
  in.step = step;
  in.globalBatch = b;
  if (b >= n) in.current = Split::equal(b, n);  // none where B cannot cover N (the policies must refuse that)
  in.nodes.resize(n);
  for (int i = 0; i < n; ++i) in.nodes[i].rank = i;
  return in;
}

// Every node ran `steps` steps of its current batch, each taking time(rank, batch) ms.
inline void observe(PolicyInput& in, const std::function<double(int, int64_t)>& time, int steps = 5) {
  for (int i = 0; i < static_cast<int>(in.nodes.size()); ++i) {
    NodeMetrics& node = in.nodes[i];
    node.batch = in.current.batches[i];
    node.recent.clear();
    double sum = 0;
    for (int s = 0; s < steps; ++s) {
      node.recent.push_back({node.batch, time(i, node.batch)});
      sum += node.recent.back().second;
    }
    node.computeMs = sum / steps;
  }
}

inline double maxTime(const std::vector<int64_t>& b, const std::function<double(int, int64_t)>& time) {
  double worst = 0;
  for (int i = 0; i < static_cast<int>(b.size()); ++i) worst = std::max(worst, time(i, b[i]));
  return worst;
}

// The least max_i time(i, b_i) over every split of `total` into n parts >= 1 (exhaustive; small n and total).
inline double bruteForceMinMax(int n, int64_t total, const std::function<double(int, int64_t)>& time) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int64_t> b(n, 1);
  std::function<void(int, int64_t)> rec = [&](int i, int64_t left) {
    if (i == n - 1) {
      b[i] = left;
      best = std::min(best, maxTime(b, time));
      return;
    }
    for (int64_t v = 1; v <= left - (n - 1 - i); ++v) {
      b[i] = v;
      rec(i + 1, left - v);
    }
  };
  rec(0, total);
  return best;
}

}  // namespace balancenet::orchestrator::testing

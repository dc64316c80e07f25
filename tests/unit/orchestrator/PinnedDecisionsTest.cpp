// Pins what balanced and proportional decide on seeded random clusters (N = 7, 64, 4,096; with and without
// memory caps), so that work on their speed (issue 19: < 1 ms at 4,096 nodes) cannot change a decision.
// Each split is checked against a plain reference computed here, and a digest of every decision of a
// short closed loop (which exercises the least-squares fits, smoothing, hysteresis and binding caps)
// against the value the code produced before that work (commit 6a930ca).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <random>
#include <utility>

#include "PolicyTestSupport.h"
#include "balancenet/orchestrator/policies/BalancedPolicy.h"
#include "balancenet/orchestrator/policies/ProportionalPolicy.h"

namespace balancenet::orchestrator {
namespace {

using testing::blankInput;
using V = std::vector<int64_t>;

constexpr int64_t kSamplesPerNode = 16;  // B = 16 N, as in bench/PolicyDecideBench.cpp

// A node's true cost a + c*b and its memory cap, drawn from mt19937_64's raw output (portable, unlike the
// standard distributions): speeds over a factor of ~7, fixed costs up to 4 ms.
struct Cluster {
  std::vector<double> a, c;
  V caps;
  std::mt19937_64 noise;
};

double unit(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) / 9007199254740992.0; }  // [0, 1)

Cluster randomCluster(int n, bool capped, uint64_t seed) {
  std::mt19937_64 gen(seed);
  Cluster cl{std::vector<double>(n), std::vector<double>(n), V(n, 0), std::mt19937_64(seed + 1)};
  for (int i = 0; i < n; ++i) {
    cl.a[i] = 4 * unit(gen);
    cl.c[i] = 0.5 * std::exp(2 * unit(gen) - 1);
    // A third of the nodes capped between 2 and 24 samples: many caps bind, and they hold far more than B.
    if (capped && gen() % 3 == 0) cl.caps[i] = 2 + static_cast<int64_t>(gen() % 23);
  }
  return cl;
}

// Every node ran 5 steps of its current batch at its true cost times +-5% noise.
void observeCluster(PolicyInput& in, Cluster& cl) {
  for (size_t i = 0; i < in.nodes.size(); ++i) {
    NodeMetrics& node = in.nodes[i];
    node.batch = in.current.batches[i];
    node.maxBatch = cl.caps[i];
    node.recent.clear();
    for (int s = 0; s < 5; ++s)
      node.recent.push_back(
          {node.batch, (cl.a[i] + cl.c[i] * static_cast<double>(node.batch)) * (1 + 0.1 * (unit(cl.noise) - 0.5))});
    node.computeMs = node.recent.back().second;
  }
}

// The definition of balanced's split: from b = 1, each further sample to the node whose time after taking
// it is the least, ties to the lower rank (a heap of (time, rank) pairs), never past a cap.
V greedyMinMax(const std::vector<double>& a, const std::vector<double>& c, int64_t total, const V& caps) {
  const size_t n = a.size();
  V b(n, 1);
  auto room = [&](size_t i) { return caps[i] <= 0 || b[i] < caps[i]; };
  using Entry = std::pair<double, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> next;
  for (size_t i = 0; i < n; ++i)
    if (room(i)) next.push({a[i] + c[i] * 2.0, i});
  for (int64_t given = static_cast<int64_t>(n); given < total && !next.empty(); ++given) {
    const size_t i = next.top().second;
    next.pop();
    ++b[i];
    if (room(i)) next.push({a[i] + c[i] * static_cast<double>(b[i] + 1), i});
  }
  return b;
}

// The definition of proportional's split: quotas total * w_i / sum w; nodes whose quota is below 1 are
// pinned at 1 (first), then those above their cap at the cap, and the rest re-shared; the free nodes get
// their floors and the samples left go by largest remainder (ties to the lower rank), skipping full nodes.
V largestRemainder(const std::vector<double>& w, int64_t total, const V& caps) {
  const size_t n = w.size();
  V b(n, 0);
  std::vector<bool> pinned(n, false);
  for (bool changed = true; changed;) {
    int64_t rest = total;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (pinned[i])
        rest -= b[i];
      else
        sum += w[i];
    }
    auto quota = [&](size_t i) { return static_cast<double>(rest) * w[i] / sum; };
    changed = false;
    for (size_t i = 0; i < n; ++i)
      if (!pinned[i] && quota(i) < 1) pinned[i] = true, b[i] = 1, changed = true;
    if (changed) continue;  // the caps only once no quota is below 1
    for (size_t i = 0; i < n; ++i)
      if (!pinned[i] && caps[i] > 0 && quota(i) > static_cast<double>(caps[i]))
        pinned[i] = true, b[i] = caps[i], changed = true;
    if (changed) continue;
    std::vector<std::pair<double, size_t>> byRemainder;  // (-remainder, rank): largest first, ties to the lower rank
    int64_t given = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!pinned[i]) {
        const double q = quota(i);
        b[i] = static_cast<int64_t>(std::floor(q));
        byRemainder.push_back({-(q - std::floor(q)), i});
      }
      given += b[i];
    }
    std::sort(byRemainder.begin(), byRemainder.end());
    for (const auto& [negative, i] : byRemainder) {
      if (given == total) break;
      if (caps[i] <= 0 || b[i] < caps[i]) ++b[i], ++given;
    }
  }
  return b;
}

// FNV-1a over the decisions of a run: the splits, and the notes (balanced's give the predicted times of the
// split in force and of the best one to 4 digits, and every quick reaction, so they pin the models too).
uint64_t digest(uint64_t h, const Decision& d) {
  auto add = [&](uint8_t byte) { h = (h ^ byte) * 1099511628211ull; };
  for (int64_t v : d.split.batches)
    for (int byte = 0; byte < 8; ++byte) add(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * byte)));
  for (char ch : d.note) add(static_cast<uint8_t>(ch));
  return h;
}

int64_t sumOf(const V& b) { return std::accumulate(b.begin(), b.end(), int64_t{0}); }

struct Case {
  int n;
  bool capped;
  uint64_t seed;
};
const Case kCases[] = {{7, false, 71},  {7, true, 72},        {64, false, 641},
                       {64, true, 642}, {4096, false, 40961}, {4096, true, 40962}};

// Runs `decisions` decisions of a fresh policy on each case in closed loop; `reference(policy, in, d, caps)`
// gives the split expected of decision d just made (`in.current` still the split it was made against). Every
// split must sum to B, and the digest of the run must equal the case's expected value.
template <typename P, typename Reference>
void expectPinned(int decisions, const uint64_t (&expected)[std::size(kCases)], Reference reference) {
  for (size_t k = 0; k < std::size(kCases); ++k) {
    const Case& cs = kCases[k];
    Cluster cl = randomCluster(cs.n, cs.capped, cs.seed);
    PolicyInput in = blankInput(cs.n, kSamplesPerNode * cs.n, 5);
    P policy;
    uint64_t h = 14695981039346656037ull;
    for (int decision = 0; decision < decisions; ++decision) {
      observeCluster(in, cl);
      const Decision d = policy.decide(in);
      ASSERT_EQ(d.split.batches, reference(policy, in, d, cl.caps))
          << "n " << cs.n << " decision " << decision << ": " << d.note;
      ASSERT_EQ(sumOf(d.split.batches), in.globalBatch);
      h = digest(h, d);
      in.current = d.split;
    }
    EXPECT_EQ(h, expected[k]) << "n " << cs.n << (cs.capped ? " capped" : "");
  }
}

// Balanced, in closed loop: six decisions, each split the greedy optimum of the lines the models hold after
// it (or the split in force, when hysteresis kept it); the digest pins the models' evolution.
TEST(PinnedDecisions, Balanced) {
  const uint64_t expected[] = {6418747328484091823u,  14103885607663059451u, 9979767173874306590u,
                               12132398427982901865u, 7864947795378633967u,  13489024848323200825u};
  expectPinned<BalancedPolicy>(
      6, expected, [](const BalancedPolicy& policy, const PolicyInput& in, const Decision& d, const V& caps) {
        std::vector<double> a, c;
        for (const auto& m : policy.models()) a.push_back(m.a()), c.push_back(m.c());
        return d.note.find("kept") != std::string::npos ? in.current.batches : greedyMinMax(a, c, in.globalBatch, caps);
      });
}

// Proportional: the largest-remainder split of B by samples per ms over the window, within the caps.
TEST(PinnedDecisions, Proportional) {
  const uint64_t expected[] = {6226728487330567003u,  17850827017126377445u, 1772417362223800703u,
                               14569597999109976713u, 18167749543828963423u, 15391922749794247927u};
  expectPinned<ProportionalPolicy>(
      3, expected, [](const ProportionalPolicy&, const PolicyInput& in, const Decision&, const V& caps) {
        std::vector<double> speed;
        for (const auto& node : in.nodes) speed.push_back(ProportionalPolicy::measuredSpeed(node));
        return largestRemainder(speed, in.globalBatch, caps);
      });
}

}  // namespace
}  // namespace balancenet::orchestrator

// Leave-out: the min-max split over a set of ranks with the peers' hand-overs in their fixed costs, and the greedy
// that drops the offloaded rank whose absence shortens the step most.
#include "balancenet/orchestrator/policies/LeaveOut.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "balancenet/comm/OffloadPlan.h"
#include "balancenet/orchestrator/policies/BalancedPolicy.h"

namespace balancenet::orchestrator {
namespace {

// Bounds on the search, so a decision over thousands of workers with many clients stays a few min-max splits: the
// sets tried per pass (the slowest 1, 2, ... 32 clients, and all of them) and the passes (each leaves more out).
constexpr size_t kMaxSetsPerPass = 32;
constexpr size_t kMaxPasses = 4;

// a_i plus h for each client the plan of `batches` gives rank i.
std::vector<double> withHandOvers(const MemberLines& lines, const std::vector<int64_t>& batches, double below,
                                  double h) {
  std::vector<double> a = lines.a;
  const comm::OffloadPlan plan = comm::planOffload(batches, below);
  for (size_t r = 0; r < plan.peerOf.size(); ++r)
    if (plan.peerOf[r] >= 0 && !plan.leftOut[r]) a[plan.peerOf[r]] += h;
  return a;
}

// The min-max split over the ranks in `in` for fixed costs `a` (the others 0).
std::vector<int64_t> splitOver(const std::vector<double>& a, const MemberLines& lines, const std::vector<bool>& in,
                               int64_t total) {
  std::vector<double> subA, subC;
  std::vector<int64_t> subCaps;
  for (size_t r = 0; r < a.size(); ++r) {
    if (!in[r]) continue;
    subA.push_back(a[r]);
    subC.push_back(lines.c[r]);
    subCaps.push_back(lines.caps.empty() ? 0 : lines.caps[r]);
  }
  const auto sub = BalancedPolicy::minimizeMaxTime(subA, subC, total, subCaps);
  std::vector<int64_t> batches(a.size(), 0);
  for (size_t r = 0, k = 0; r < a.size(); ++r)
    if (in[r]) batches[r] = sub[k++];
  return batches;
}

}  // namespace

double predictedWithHandOvers(const MemberLines& lines, const std::vector<int64_t>& batches, double below, double h) {
  const std::vector<double> a = withHandOvers(lines, batches, below, h);
  double worst = 0;
  for (size_t r = 0; r < a.size(); ++r)
    if (batches[r] > 0) worst = std::max(worst, a[r] + lines.c[r] * static_cast<double>(batches[r]));
  return worst;
}

MembershipChoice bestSplitOver(const MemberLines& lines, const std::vector<bool>& in, int64_t total, double below,
                               double h) {
  MembershipChoice choice;
  // The workers kept in must hold the batch within their memory caps (and one sample each), or the set is no split.
  int64_t room = 0, members = 0;
  bool capped = true;
  for (size_t r = 0; r < in.size(); ++r) {
    if (!in[r]) continue;
    ++members;
    const int64_t cap = lines.caps.empty() ? 0 : lines.caps[r];
    capped = capped && cap > 0;
    room += cap;
  }
  if (members == 0 || members > total || (capped && room < total)) {
    choice.ms = std::numeric_limits<double>::infinity();
    return choice;
  }
  choice.batches = splitOver(lines.a, lines, in, total);
  for (int round = 0; round < 2; ++round)
    choice.batches = splitOver(withHandOvers(lines, choice.batches, below, h), lines, in, total);
  choice.ms = predictedWithHandOvers(lines, choice.batches, below, h);
  return choice;
}

MembershipChoice chooseMembers(const MemberLines& lines, int64_t total, double below, double h) {
  const size_t n = lines.a.size();
  std::vector<bool> in(n, true);
  MembershipChoice best = bestSplitOver(lines, in, total, below, h);
  // Only a rank that hands its gradient over in the best split so far can be worth less than that. Leaving out one of
  // two clients of two peers saves nothing while the other's peer still waits, so the slowest k of them go together
  // (k = 1, 2, ...: the slowest are worth least), and the plan of the split that wins is looked at again.
  for (size_t pass = 0; pass < kMaxPasses; ++pass) {
    const comm::OffloadPlan plan = comm::planOffload(best.batches, below);
    std::vector<size_t> clients;
    for (size_t r = 0; r < n; ++r)
      if (in[r] && plan.peerOf[r] >= 0 && !plan.leftOut[r]) clients.push_back(r);
    std::stable_sort(clients.begin(), clients.end(), [&](size_t x, size_t y) { return lines.c[x] > lines.c[y]; });
    size_t members = 0;
    for (size_t r = 0; r < n; ++r) members += in[r] ? 1 : 0;
    MembershipChoice better = best;
    size_t leaving = 0;
    const auto tryLeaving = [&](size_t k) {  // the slowest k clients out
      std::vector<bool> trial = in;
      for (size_t i = 0; i < k; ++i) trial[clients[i]] = false;
      MembershipChoice without = bestSplitOver(lines, trial, total, below, h);
      if (without.ms < better.ms) better = std::move(without), leaving = k;
    };
    for (size_t k = 1; k <= clients.size() && k < members && k <= kMaxSetsPerPass; ++k) tryLeaving(k);
    // And all of them at once: where every client's one sample outlasts the others' step, any fewer save nothing.
    if (clients.size() > kMaxSetsPerPass && clients.size() < members) tryLeaving(clients.size());
    if (leaving == 0) break;
    for (size_t k = 0; k < leaving; ++k) in[clients[k]] = false;
    best = std::move(better);
  }
  return best;
}

std::vector<std::string> membershipChanges(const Split& before, const Split& after) {
  std::vector<std::string> lines;
  if (before.worldSize() != after.worldSize()) return lines;
  for (int r = 0; r < after.worldSize(); ++r) {
    if (before.batches[r] > 0 && after.batches[r] == 0)
      lines.push_back(
          fmt::format("rank {} leaves the exchange (its {} samples were worth less than its hand-over; "
                      "it gets the sum and times a one-sample probe)",
                      r, before.batches[r]));
    else if (before.batches[r] == 0 && after.batches[r] > 0)
      lines.push_back(fmt::format("rank {} is back in the exchange with {} samples", r, after.batches[r]));
  }
  return lines;
}

}  // namespace balancenet::orchestrator

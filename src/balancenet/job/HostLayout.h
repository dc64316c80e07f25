// HostLayout: the ranks of a job over hosts that run different numbers of workers (prefix sums by node rank).
#pragma once
#include <string>
#include <vector>

namespace balancenet::job {

// Host k runs workers[k] workers, ranks firstRanks[k] .. firstRanks[k] + workers[k] - 1: in node-rank order,
// without gaps, so ranks 0 .. world - 1 each exist exactly once and a worker's local rank is rank - firstRanks[k].
struct HostLayout {
  std::vector<int> workers;     // by node rank
  std::vector<int> firstRanks;  // by node rank
  int world = 0;
  int hostOf(int rank) const;  // the node rank that runs `rank`
};

// The layout of `workersPerHost` (by node rank). UsageError for no hosts or a count below 1.
HostLayout hostLayout(const std::vector<int>& workersPerHost);

// --nproc-per-node: "3" (this host's count) or "3,1" (every host's, by node rank). UsageError naming the flag
// for anything else (a count of 0, a word, an empty item).
std::vector<int> parseWorkersPerHost(const std::string& text);

// "3,1": the list form of `workersPerHost`, as --nproc-per-node takes it.
std::string workersPerHostText(const std::vector<int>& workersPerHost);

}  // namespace balancenet::job

// Prefix sums of the hosts' worker counts, and the --nproc-per-node list's syntax.
#include "balancenet/job/HostLayout.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::job {

int HostLayout::hostOf(int rank) const {
  const auto after = std::upper_bound(firstRanks.begin(), firstRanks.end(), rank);
  return static_cast<int>(after - firstRanks.begin()) - 1;
}

HostLayout hostLayout(const std::vector<int>& workersPerHost) {
  require(!workersPerHost.empty(), "a job needs at least one host");
  HostLayout layout;
  layout.workers = workersPerHost;
  for (size_t k = 0; k < workersPerHost.size(); ++k) {
    require(workersPerHost[k] >= 1, fmt::format("host {} must run at least 1 worker, got {}", k, workersPerHost[k]));
    layout.firstRanks.push_back(layout.world);
    layout.world += workersPerHost[k];
  }
  return layout;
}

std::vector<int> parseWorkersPerHost(const std::string& text) {
  std::vector<int> counts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // Digits only: parseInteger, as std::stoll, would take " 2" and "+2".
    const bool digits =
        !item.empty() && std::all_of(item.begin(), item.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
    const auto count = digits ? parseInteger<int>(item) : std::nullopt;
    require(count && *count >= 1,
            fmt::format("--nproc-per-node must be this host's worker count (at least 1) or one count per host by node "
                        "rank (e.g. 2,1), got '{}'",
                        text));
    counts.push_back(*count);
    if (comma == std::string::npos) return counts;
    start = comma + 1;
  }
}

std::string workersPerHostText(const std::vector<int>& workersPerHost) {
  return fmt::format("{}", fmt::join(workersPerHost, ","));
}

}  // namespace balancenet::job

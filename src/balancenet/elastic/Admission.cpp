// Admitting or refusing joiners at a boundary.
#include "balancenet/elastic/Admission.h"

#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace balancenet::elastic {

bool admitJoiners(Membership& membership, int workers, int next, int64_t step, int maxWorkers, int64_t globalBatch) {
  if (workers >= globalBatch) {
    // A split gives each worker at least one sample: one more would end the job with an invalid split.
    const auto reason =
        fmt::format("the job has {} workers, one per sample of --global-batch {}", workers, globalBatch);
    for (int m : membership.takePendingJoiners(std::numeric_limits<int>::max())) {
      membership.refuse(m, reason);
      spdlog::warn("step {}: rank {} refused: {}", step, m, reason);
    }
    return false;
  }
  const int room = maxWorkers - workers;
  if (room <= 0) return false;  // joiners wait: a member may leave
  auto joiners = membership.takePendingJoiners(room);
  if (joiners.empty()) return false;
  membership.announce(next, Plan{step + 1, joiners});
  spdlog::info("step {}: rank(s) {} will join after step {}", step, fmt::join(joiners, ","), step + 1);
  return true;
}

}  // namespace balancenet::elastic

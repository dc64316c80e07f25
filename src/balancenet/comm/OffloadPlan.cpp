// The slow-rank rule and the round-robin pairing.
#include "balancenet/comm/OffloadPlan.h"

#include <algorithm>

namespace balancenet::comm {

std::vector<int> OffloadPlan::clientsOf(int rank) const {
  std::vector<int> out;
  for (int r = 0; r < static_cast<int>(peerOf.size()); ++r)
    if (peerOf[r] == rank) out.push_back(r);
  return out;
}

std::vector<int> OffloadPlan::sendersTo(int rank) const {
  std::vector<int> out;
  for (int r : clientsOf(rank))
    if (!leftOut[r]) out.push_back(r);
  return out;
}

OffloadPlan planOffload(const std::vector<int64_t>& batches, double below) {
  OffloadPlan plan;
  const int world = static_cast<int>(batches.size());
  plan.peerOf.assign(world, -1);
  plan.leftOut.assign(world, false);
  const int64_t largest = batches.empty() ? 0 : *std::max_element(batches.begin(), batches.end());
  below = std::min(below, 1.0);  // so the largest rank is never slow and the ring is never empty
  std::vector<int> slow;
  for (int r = 0; r < world; ++r) {
    plan.leftOut[r] = world > 1 && batches[r] == 0 && largest > 0;
    const bool isSlow =
        plan.leftOut[r] || (world > 1 && below > 0 && static_cast<double>(batches[r]) < below * largest);
    (isSlow ? slow : plan.ring).push_back(r);
  }
  for (size_t i = 0; i < slow.size(); ++i) plan.peerOf[slow[i]] = plan.ring[i % plan.ring.size()];
  return plan;
}

}  // namespace balancenet::comm

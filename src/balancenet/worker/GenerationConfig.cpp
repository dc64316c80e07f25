// What changes from one elastic generation to the next.
#include "balancenet/worker/GenerationConfig.h"

#include <fmt/format.h>

namespace balancenet::worker {

orchestrator::OrchestratorOptions splitLogStart(const elastic::Generation& g, int workersBefore) {
  orchestrator::OrchestratorOptions o;
  if (g.number == 0) return o;
  o.continueLog = true;
  o.firstStep = g.committed[g.sourceRank()];
  const int workers = static_cast<int>(g.members.size());
  o.firstNote = workersBefore > 0 ? fmt::format("membership change: {} -> {} workers", workersBefore, workers)
                                  : fmt::format("membership change: {} workers", workers);
  return o;
}

job::JobConfig forMembers(const job::JobConfig& c, const std::vector<int>& members) {
  bool launched = static_cast<int>(members.size()) == c.split.worldSize();
  for (size_t r = 0; launched && r < members.size(); ++r) launched = members[r] == static_cast<int>(r);
  if (launched) return c;
  job::JobConfig g = c;
  g.split = Split::equal(c.trainer.globalBatch, static_cast<int>(members.size()));
  g.emulation.slowdown = c.emulation.slowdown.forNodes(members);
  g.emulation.nodeSpeed = c.emulation.nodeSpeed.forNodes(members);
  g.emulation.netDelayMs = emulation::FactorSchedule::pick(c.emulation.netDelayMs, members);
  g.emulation.netBandwidthMbps = emulation::FactorSchedule::pick(c.emulation.netBandwidthMbps, members);
  // The caps too (--shard-state slices by them); a member beyond the list has none, as WorkerMemory counts it.
  if (!c.memoryLimitMb.empty()) {
    g.memoryLimitMb.clear();
    for (int m : members)
      g.memoryLimitMb.push_back(m < static_cast<int>(c.memoryLimitMb.size()) ? c.memoryLimitMb[m] : 0.0);
  }
  return g;
}

}  // namespace balancenet::worker

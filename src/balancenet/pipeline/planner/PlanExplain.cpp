// PlanExplain: the cost table and the chosen placement as fixed-width text (--explain-partition,
// `balancenet plan`).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "balancenet/pipeline/planner/CostModel.h"
#include "balancenet/pipeline/planner/Planner.h"

namespace balancenet::pipeline {

std::string explainPlacement(const PlanInput& input, const Placement& placement) {
  const int n = static_cast<int>(input.nodes.size());
  std::string out = "block costs, ms per sample (forward + backward):\n";
  out += fmt::format("{:>5}  {:<12}", "block", "name");
  for (int node = 0; node < n; ++node) out += fmt::format(" {:>9}", fmt::format("node {}", node));
  out += "\n";
  for (size_t b = 0; b < input.blocks.size(); ++b) {
    out += fmt::format("{:>5}  {:<12}", b, input.blocks[b].name);
    for (int node = 0; node < n; ++node) out += fmt::format(" {:>9.3f}", input.nodes[node].blockMs(b));
    out += "\n";
  }
  const planner::CostTable table(input);
  out += fmt::format("placement: {}, M {}{}\n", placement.describe(), placement.microBatches,
                     placement.method.empty() ? "" : " (" + placement.method + " search)");
  out += fmt::format("{:>5} {:>7} {:>4} {:>9} {:>11} {:>9} {:>10} {:>10}\n", "stage", "replica", "rank", "blocks",
                     "compute_ms", "stage_ms", "memory_mb", "limit_mb");
  const int S = placement.stages;
  for (int slot = 0; slot < static_cast<int>(placement.slotRanks.size()); ++slot) {
    const int s = slot % S, j = slot / S, rank = placement.slotRanks[slot];
    const auto& range = placement.partition.stages.at(s);
    const int64_t share = placement.shares.at(j);
    const int m = S == 1 ? 1 : static_cast<int>(std::min<int64_t>(placement.microBatches, share));
    const double memory = table.memoryBytes(range.first, range.end, (share + m - 1) / m,
                                            planner::inFlightMicroBatches(input.schedule, s, S, m));
    const double cap = input.nodes[rank].memoryLimitBytes;
    out += fmt::format("{:>5} {:>7} {:>4} {:>9} {:>11.2f} {:>9.3f} {:>10.1f} {:>10}\n", s, j, rank,
                       fmt::format("{}-{}", range.first, range.end - 1), placement.slotComputeMs.at(slot),
                       placement.slotStageMs.at(slot), memory / 1048576.0,
                       cap > 0 ? fmt::format("{:.1f}", cap / 1048576.0) : "none");
  }
  const double samplesPerSecond = placement.stepMs > 0 ? input.globalBatch * 1000.0 / placement.stepMs : 0;
  out += fmt::format("predicted step {:.2f} ms (sync {:.2f} ms), {:.1f} samples/s\n", placement.stepMs,
                     placement.syncMs, samplesPerSecond);
  return out;
}

}  // namespace balancenet::pipeline

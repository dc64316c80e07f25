// Efficiency: per-rank sums over the step table, divided by the probe's peak.
#include "balancenet/metrics/Efficiency.h"

#include <map>

#include <fmt/format.h>

namespace balancenet::metrics {

std::vector<WorkerEfficiency> workerEfficiency(const StepTable& table, const std::vector<GemmPeak>& peaks,
                                               const std::vector<int>& threads, double flopsPerSample,
                                               double trainSeconds) {
  struct Sums {
    double samples = 0, computeMs = 0;
  };
  std::map<int, Sums> byRank;
  for (const auto& r : table.records()) {
    byRank[r.rank].samples += static_cast<double>(r.batch);
    byRank[r.rank].computeMs += r.computeMs;
  }
  std::vector<WorkerEfficiency> out;
  for (const auto& [rank, sums] : byRank) {
    WorkerEfficiency w;
    w.rank = rank;
    if (rank >= 0 && rank < static_cast<int>(peaks.size())) w.peak = peaks[rank];
    if (rank >= 0 && rank < static_cast<int>(threads.size())) w.threads = threads[rank];
    const double flops = 3 * flopsPerSample * sums.samples;
    const double ceiling = w.peak.oneThread * w.threads;
    if (trainSeconds > 0) w.achievedFlops = flops / trainSeconds;
    if (ceiling > 0) w.fractionOfPeak = w.achievedFlops / ceiling;
    if (ceiling > 0 && sums.computeMs > 0) w.computeFraction = flops / (sums.computeMs / 1000) / ceiling;
    out.push_back(w);
  }
  return out;
}

nlohmann::json toJson(const std::vector<WorkerEfficiency>& workers) {
  auto j = nlohmann::json::array();
  for (const auto& w : workers)
    j.push_back({{"rank", w.rank},
                 {"threads", w.threads},
                 {"peak_gflops_one_thread", w.peak.oneThread / 1e9},
                 {"peak_gflops_all_threads", w.peak.allThreads / 1e9},
                 {"peak_threads", w.peak.threads},
                 {"achieved_gflops", w.achievedFlops / 1e9},
                 {"fraction_of_peak", w.fractionOfPeak},
                 {"compute_fraction_of_peak", w.computeFraction}});
  return j;
}

std::string formatEfficiency(const std::vector<WorkerEfficiency>& workers) {
  std::string out;
  for (const auto& w : workers)
    out += fmt::format("{}rank {}: {:.1f} GFLOP/s, {:.2f} of peak ({} x {:.1f})", out.empty() ? "" : "; ", w.rank,
                       w.achievedFlops / 1e9, w.fractionOfPeak, w.threads, w.peak.oneThread / 1e9);
  return out;
}

}  // namespace balancenet::metrics

// Building and rendering comparison tables.
#include "balancenet/report/Comparison.h"

#include <algorithm>

#include <fmt/format.h>

namespace balancenet::report {

Comparison::Comparison(std::vector<ComparedRun> runs, double targetAccuracy) : target_(targetAccuracy) {
  for (const auto& run : runs) {
    const auto& s = run.results.summary;
    ComparisonRow row;
    row.model = run.model;
    row.policy = run.policy;
    row.meanUpdateMs = s.value("mean_weight_update_ms", 0.0);
    row.updateMsPer100 = s.value("weight_update_ms_per_100", std::vector<double>{});
    row.samplesPerSecond = s.value("samples_per_second", 0.0);
    row.secondsToTarget = run.results.secondsToAccuracy(targetAccuracy);
    if (s.contains("final_accuracy") && s["final_accuracy"].is_number()) row.finalAccuracy = s["final_accuracy"];
    row.effectiveGlobalBatch = s.value("effective_global_batch", 0.0);
    row.finalSplit = s.value("split", "");
    row.meanSyncMs = run.results.meanSyncMs();
    row.bytesPerStep = run.results.bytesSentPerStep;
    rows_.push_back(row);
  }
}

std::string Comparison::table() const {
  std::string out;
  std::string model;
  for (const auto& r : rows_) {
    if (r.model != model) {
      model = r.model;
      out += fmt::format("\n{}\n{:<13} {:>12} {:>9} {:>9} {:>11} {:>14} {:>9} {:>10}  {}\n", model, "run", "update ms",
                         "sync ms", "MB/step", "samples/s", fmt::format("to {:.0f}% (s)", 100 * target_), "final %",
                         "eff. batch", "final split");
    }
    out += fmt::format("{:<13} {:>12.1f} {:>9.1f} {:>9.2f} {:>11.1f} {:>14} {:>9} {:>10.1f}  {}\n", r.policy,
                       r.meanUpdateMs, r.meanSyncMs, r.bytesPerStep / 1e6, r.samplesPerSecond,
                       r.secondsToTarget >= 0 ? fmt::format("{:.1f}", r.secondsToTarget) : "-",
                       r.finalAccuracy >= 0 ? fmt::format("{:.2f}", 100 * r.finalAccuracy) : "-",
                       r.effectiveGlobalBatch, r.finalSplit);
  }
  size_t blocks = 0;
  for (const auto& r : rows_) blocks = std::max(blocks, r.updateMsPer100.size());
  if (blocks > 1) {
    out += "\nmean weight-update time (ms) of each block of 100 updates (the paper's table)\n";
    out += fmt::format("{:<10} {:<13}", "model", "run");
    for (size_t b = 0; b < blocks; ++b) out += fmt::format(" {:>7}", fmt::format("{}-{}", b * 100 + 1, (b + 1) * 100));
    out += "\n";
    for (const auto& r : rows_) {
      out += fmt::format("{:<10} {:<13}", r.model, r.policy);
      for (double v : r.updateMsPer100) out += fmt::format(" {:>7.1f}", v);
      out += "\n";
    }
  }
  return out;
}

std::string Comparison::csv() const {
  size_t blocks = 0;
  for (const auto& r : rows_) blocks = std::max(blocks, r.updateMsPer100.size());
  std::string out =
      "model,policy,mean_update_ms,samples_per_s,seconds_to_target,final_accuracy,effective_global_batch,mean_sync_ms,"
      "bytes_sent_per_step";
  for (size_t b = 0; b < blocks; ++b) out += fmt::format(",update_ms_100_{}", b + 1);
  out += "\n";
  for (const auto& r : rows_) {
    out += fmt::format("{},{},{:.3f},{:.2f},{},{},{:.2f},{:.3f},{:.0f}", r.model, r.policy, r.meanUpdateMs,
                       r.samplesPerSecond, r.secondsToTarget >= 0 ? fmt::format("{:.2f}", r.secondsToTarget) : "",
                       r.finalAccuracy >= 0 ? fmt::format("{:.4f}", r.finalAccuracy) : "", r.effectiveGlobalBatch,
                       r.meanSyncMs, r.bytesPerStep);
    for (size_t b = 0; b < blocks; ++b)
      out += b < r.updateMsPer100.size() ? fmt::format(",{:.3f}", r.updateMsPer100[b]) : ",";
    out += "\n";
  }
  return out;
}

nlohmann::json Comparison::json() const {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : rows_)
    runs.push_back({{"model", r.model},
                    {"policy", r.policy},
                    {"mean_weight_update_ms", r.meanUpdateMs},
                    {"weight_update_ms_per_100", r.updateMsPer100},
                    {"samples_per_second", r.samplesPerSecond},
                    {"seconds_to_target", r.secondsToTarget >= 0 ? nlohmann::json(r.secondsToTarget) : nullptr},
                    {"final_accuracy", r.finalAccuracy >= 0 ? nlohmann::json(r.finalAccuracy) : nullptr},
                    {"effective_global_batch", r.effectiveGlobalBatch},
                    {"mean_sync_ms", r.meanSyncMs},
                    {"bytes_sent_per_step", r.bytesPerStep},
                    {"final_split", r.finalSplit}});
  return {{"target_accuracy", target_}, {"runs", runs}};
}

}  // namespace balancenet::report

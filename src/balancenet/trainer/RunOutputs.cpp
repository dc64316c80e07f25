// Gathering step records and writing the run directory.
#include "balancenet/trainer/RunOutputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/metrics/LeftOutSpans.h"
#include "balancenet/metrics/RankBreakdown.h"
#include "balancenet/metrics/ResourceProbe.h"
#include "balancenet/metrics/StepTable.h"

namespace balancenet::trainer {

namespace {

// Every rank's probe result and threads, in rank order (the probes ran in each worker's own process).
void gatherCapacities(comm::Collectives& comm, const metrics::WorkerCapacity& mine,
                      std::vector<metrics::GemmPeak>& peaks, std::vector<int>& threads) {
  const auto mineRow = at::tensor(
      {mine.peak.oneThread, mine.peak.allThreads, double(mine.peak.threads), double(mine.threads)}, at::kDouble);
  for (const auto& row : comm.allgather(mineRow)) {
    const double* v = row.data_ptr<double>();
    peaks.push_back({v[0], v[1], static_cast<int>(v[2])});
    threads.push_back(static_cast<int>(v[3]));
  }
}

// Every rank's peak resident set in MiB, in rank order: the high-water mark of its worker process so far,
// which at the end of a run is the run's (ranks run as threads of one process share one figure).
std::vector<double> gatherPeakMemoryMb(comm::Collectives& comm) {
  std::vector<double> mb;
  for (const auto& t : comm.allgather(at::full({1}, metrics::peakResidentBytes() / (1 << 20), at::kDouble)))
    mb.push_back(t.item<double>());
  return mb;
}

}  // namespace

void writeRunFile(const std::string& runDir, const std::string& name, const std::string& contents) {
  if (runDir.empty()) return;
  ensureDirectory(runDir);
  writeFileAtomically(runDir + "/" + name, contents);
}

std::vector<metrics::WorkerEfficiency> writeRunOutputs(comm::Collectives& comm,
                                                       const std::vector<metrics::StepRecord>& mine,
                                                       metrics::RunSummary& summary, const std::string& runDir,
                                                       const metrics::WorkerCapacity& capacity) {
  // Ranks may hold different numbers of rows (an elastic job's joiners and survivors): the counts go
  // first, then every rank's rows padded to the longest.
  const int64_t rows = static_cast<int64_t>(mine.size());
  const auto counts = comm.allgather(at::full({1}, rows, at::kLong));
  int64_t longest = 0;
  for (const auto& n : counts) longest = std::max(longest, n.item<int64_t>());
  auto local = at::zeros({longest, metrics::StepRecord::kFields}, at::kDouble);
  for (int64_t i = 0; i < rows; ++i) {
    auto row = mine[i].toRow();
    std::copy(row.begin(), row.end(), local.data_ptr<double>() + i * metrics::StepRecord::kFields);
  }
  std::vector<metrics::StepRecord> all;
  const auto parts = comm.allgather(local);
  for (size_t r = 0; r < parts.size(); ++r) {
    const double* data = parts[r].data_ptr<double>();
    for (int64_t i = 0; i < counts[r].item<int64_t>(); ++i)
      all.push_back(metrics::StepRecord::fromRow(data + i * metrics::StepRecord::kFields));
  }
  metrics::StepTable table(std::move(all));
  summary.meanUpdateMs = table.meanUpdateMs();
  summary.updateMsPer100 = table.updateMsPerBlock(100);
  std::vector<metrics::GemmPeak> peaks;
  std::vector<int> threads;
  gatherCapacities(comm, capacity, peaks, threads);
  const auto efficiency =
      metrics::workerEfficiency(table, peaks, threads, capacity.flopsPerSample, summary.trainSeconds);
  summary.peakMemoryMb = gatherPeakMemoryMb(comm);
  if (capacity.peak.oneThread > 0) {
    summary.extra["workers"] = metrics::toJson(efficiency);
    summary.extra["blas"] = blasLibraryPath();
  }
  if (comm.rank() != 0) return efficiency;
  const auto breakdown = metrics::breakdownByRank(table);
  summary.extra["per_rank"] = metrics::toJson(breakdown);
  if (breakdown.ranks.size() > 1) spdlog::info("{}", metrics::describe(breakdown));
  const auto leftOut = metrics::leftOutSpans(table);
  summary.extra["left_out"] = metrics::toJson(leftOut);
  if (!leftOut.empty()) spdlog::info("{}", metrics::describe(leftOut, summary.steps));
  writeRunFile(runDir, "steps.csv", table.toCsv());
  writeRunFile(runDir, "summary.json", summary.toJson().dump(2) + "\n");
  return efficiency;
}

void writeLayerTraffic(comm::Collectives& comm, const std::string& myRows, const std::string& runDir) {
  const auto parts = comm.allgatherText(myRows);
  std::string csv = "step,rank,layer,method,bytes_sent,bytes_received\n";
  bool any = false;
  for (const auto& p : parts) {
    csv += p;
    any = any || !p.empty();
  }
  if (comm.rank() == 0 && any) writeRunFile(runDir, "layers.csv", csv);
}

void writeTimeline(comm::Collectives& comm, const Timeline& timeline, const std::string& path) {
  const auto parts = comm.allgatherText(timeline.eventsJson());
  if (comm.rank() != 0) return;
  // Its directory is made as --run-dir's is: a trace asked for into a new folder must not fail the run at its end.
  const auto folder = std::filesystem::path(path).parent_path();
  if (!folder.empty()) ensureDirectory(folder.string());
  writeFileAtomically(path, Timeline::mergeTraces(parts));
}

}  // namespace balancenet::trainer

// Derived step metrics and the CSV form of a run.
#include "balancenet/metrics/StepTable.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace balancenet::metrics {

StepTable::StepTable(std::vector<StepRecord> records) : records_(std::move(records)) {
  std::sort(records_.begin(), records_.end(), [](const StepRecord& a, const StepRecord& b) {
    return a.step != b.step ? a.step < b.step : a.rank < b.rank;
  });
  for (const auto& r : records_) {
    if (stepIds_.empty() || stepIds_.back() != r.step) {
      stepIds_.push_back(r.step);
      commByStep_.push_back(std::numeric_limits<double>::infinity());
      updateByStep_.push_back(0);
    }
    commByStep_.back() = std::min(commByStep_.back(), r.syncMs);
    updateByStep_.back() = std::max(updateByStep_.back(), r.updateMs);
  }
}

double StepTable::commMs(int64_t step) const {
  auto it = std::lower_bound(stepIds_.begin(), stepIds_.end(), step);
  if (it == stepIds_.end() || *it != step) return 0;
  return commByStep_[it - stepIds_.begin()];
}

double StepTable::meanUpdateMs() const {
  if (updateByStep_.empty()) return 0;
  double sum = 0;
  for (double v : updateByStep_) sum += v;
  return sum / updateByStep_.size();
}

std::vector<double> StepTable::updateMsPerBlock(int block) const {
  std::vector<double> out;
  for (size_t begin = 0; begin < updateByStep_.size(); begin += block) {
    size_t end = std::min(updateByStep_.size(), begin + block);
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += updateByStep_[i];
    out.push_back(sum / (end - begin));
  }
  return out;
}

int64_t StepTable::totalSamples() const {
  int64_t n = 0;
  // Every stage of a pipeline processes its column's samples: count them once, at stage 0.
  for (const auto& r : records_)
    if (r.stage == 0) n += r.batch;
  return n;
}

std::string StepTable::toCsv() const {
  std::string out =
      "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received,"
      "stage,micro_batches,bubble_ms,send_ms,recv_ms,data_ms,throttled_periods,throttled_ms,sync_cpu_ms,comm_phases,"
      "grad_sq_local,grad_sq,noise_scale,loss_scale,skipped,own_ms\n";
  for (const auto& r : records_) {
    out += fmt::format(
        "{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.6f},{:.6g},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{},{:.3f},{:"
        ".4f},{},",
        r.step, r.rank, r.batch, r.computeMs, commMs(r.step), waitMs(r), r.syncMs, r.updateMs, r.loss, r.lr,
        r.bytesSent, r.bytesReceived, r.stage, r.microBatches, r.bubbleMs, r.sendMs, r.recvMs, r.dataMs,
        r.throttledPeriods, r.throttledMs, r.syncCpuMs, r.commPhases);
    // Empty cells where nothing was measured (a CSV reader's missing value, not a number that looks real).
    if (r.gradSq >= 0)
      out += fmt::format("{:.6g},{:.6g}", r.gradSqLocal, r.gradSq);
    else
      out += ",";
    out += r.noiseScale >= 0 ? fmt::format(",{:.6g}", r.noiseScale) : ",";
    out += r.lossScale > 0 ? fmt::format(",{:g},{}", r.lossScale, r.skipped) : fmt::format(",,{}", r.skipped);
    out += fmt::format(",{:.4f}\n", r.ownMs);
  }
  return out;
}

}  // namespace balancenet::metrics

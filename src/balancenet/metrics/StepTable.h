// StepTable: every rank's StepRecords of a run, with the derived comm/wait split and the run's statistics.
#pragma once
#include <string>
#include <vector>

#include "balancenet/metrics/StepRecord.h"

namespace balancenet::metrics {

class StepTable {
 public:
  explicit StepTable(std::vector<StepRecord> records);  // any order; sorted by (step, rank)

  const std::vector<StepRecord>& records() const { return records_; }
  // Time spent moving bytes in a step: the least time any rank spent in the sync (the last rank to
  // arrive waits for nobody). What a rank spent beyond that was waiting for slower peers.
  double commMs(int64_t step) const;
  double waitMs(const StepRecord& r) const { return r.syncMs - commMs(r.step); }

  // Mean over steps of the slowest rank's weight-update time.
  double meanUpdateMs() const;
  // The paper's table: mean weight-update time of each consecutive block of `block` updates.
  std::vector<double> updateMsPerBlock(int block = 100) const;
  int64_t totalSamples() const;  // samples of the global batches (a pipeline's stage-0 rows)

  // steps.csv: step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received,
  // stage,micro_batches,bubble_ms,send_ms,recv_ms,data_ms,throttled_periods,throttled_ms,sync_cpu_ms,comm_phases
  // (columns are only ever appended: readers of older files look them up by name)
  std::string toCsv() const;

 private:
  std::vector<StepRecord> records_;
  std::vector<double> commByStep_;  // indexed by position of the step in stepIds_
  std::vector<int64_t> stepIds_;
  std::vector<double> updateByStep_;  // slowest rank per step
};

}  // namespace balancenet::metrics

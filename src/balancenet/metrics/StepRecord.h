// StepRecord: what one rank measured in one training step.
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::metrics {

struct StepRecord {
  int64_t step = 0;
  int rank = 0;
  int64_t batch = 0;     // samples this rank processed
  double computeMs = 0;  // forward + backward (+ emulated slowness)
  double syncMs = 0;     // inside the gradient sync: waiting for peers + moving bytes
  double updateMs = 0;   // start of step to parameters updated (the paper's weight-update time)
  double loss = 0;       // loss of the whole global batch (same on every rank)
  double lr = 0;
  int64_t bytesSent = 0;
  int64_t bytesReceived = 0;

  // Flat numeric form, so records travel in one all-gather.
  static constexpr int kFields = 10;
  std::vector<double> toRow() const {
    return {double(step), double(rank),      double(batch),        computeMs, syncMs, updateMs, loss,
            lr,           double(bytesSent), double(bytesReceived)};
  }
  static StepRecord fromRow(const double* v) {
    return {int64_t(v[0]), int(v[1]), int64_t(v[2]), v[3], v[4], v[5], v[6], v[7], int64_t(v[8]), int64_t(v[9])};
  }
};

}  // namespace balancenet::metrics

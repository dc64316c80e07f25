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
  // Pipeline parallelism (data parallelism: stage 0, one micro-batch, no bubble, no transfers).
  int stage = 0;
  int64_t microBatches = 1;
  double bubbleMs = 0;  // idle inside the schedule: waiting for a neighbour stage's activation or gradient
  double sendMs = 0;    // waiting for this stage's sends to be taken (posted asynchronously)
  double recvMs = 0;    // receiving activations and gradients once they were on their way
  double dataMs = 0;    // reading (decoding, augmenting) this rank's samples; part of computeMs
  // Where a CPU quota's time went (issue 30): the periods in which this worker's cgroup ran out of quota during
  // the step and how long it stood still (0 without a quota), the process's CPU time (all threads, Gloo's
  // included) inside the gradient sync, and the dependent communication phases the sync waited on.
  int64_t throttledPeriods = 0;
  double throttledMs = 0;
  double syncCpuMs = 0;
  int64_t commPhases = 0;
  // The gradient noise scale's inputs (issue 32, adaptive/GradientNoiseScale.h), measured only when the
  // allocator asks (--global-batch auto): sum_i (b_i/B)|g_i|^2 over the ranks' mean local gradients, and
  // |g|^2 of the synchronised one; the same on every rank. noiseScale: the smoothed B_noise after the step.
  // Not measured: gradSq < 0.
  double gradSqLocal = 0;
  double gradSq = -1;
  double noiseScale = -1;
  // --precision fp16: the loss scale the step's gradient was computed at (0: no scaling), and whether the step was
  // skipped because that gradient overflowed (the weights did not change).
  double lossScale = 0;
  int64_t skipped = 0;
  // This rank's own work outside forward+backward that the others' exchange waits for (issue 55): the optimizer's
  // step, and the part of the sync it spent working rather than waiting (a hand-over's packing and sending). The
  // balanced policy adds its mean to the rank's fixed cost: on a capped host this work is as slow as its compute.
  double ownMs = 0;
  // A rank left out of the exchange (batch 0) still times forward+backward of `probeSamples` samples whose gradient
  // is dropped, so the policy sees when it gets faster (issue 55); 0 for a rank with a share.
  int64_t probeSamples = 0;
  // The part of ownMs a peer spent on its offloaded clients' hand-overs (adding their gradients, waiting for the
  // last step's sums to leave), and how many clients it served: what a client costs the others' exchange.
  double servingMs = 0;
  int64_t clientsServed = 0;

  // The samples whose forward+backward computeMs timed: the share, or a left-out rank's probe.
  int64_t timedSamples() const { return batch > 0 ? batch : probeSamples; }

  // Flat numeric form, so records travel in one all-gather.
  static constexpr int kFields = 29;
  std::vector<double> toRow() const {
    return {double(step),
            double(rank),
            double(batch),
            computeMs,
            syncMs,
            updateMs,
            loss,
            lr,
            double(bytesSent),
            double(bytesReceived),
            double(stage),
            double(microBatches),
            bubbleMs,
            sendMs,
            recvMs,
            dataMs,
            double(throttledPeriods),
            throttledMs,
            syncCpuMs,
            double(commPhases),
            gradSqLocal,
            gradSq,
            noiseScale,
            lossScale,
            double(skipped),
            ownMs,
            double(probeSamples),
            servingMs,
            double(clientsServed)};
  }
  static StepRecord fromRow(const double* v) {
    return {int64_t(v[0]),  int(v[1]),     int64_t(v[2]),  v[3],           v[4],          v[5],  v[6],  v[7],
            int64_t(v[8]),  int64_t(v[9]), int(v[10]),     int64_t(v[11]), v[12],         v[13], v[14], v[15],
            int64_t(v[16]), v[17],         v[18],          int64_t(v[19]), v[20],         v[21], v[22], v[23],
            int64_t(v[24]), v[25],         int64_t(v[26]), v[27],          int64_t(v[28])};
  }
};

}  // namespace balancenet::metrics

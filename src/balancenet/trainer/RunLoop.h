// RunLoop: the one loop around every way of training. It steps an engine to options.steps (or the earlier
// end of a StopRule: --stop-at-accuracy, --time-budget-s), evaluates on the cadence, prints the progress
// lines, calls the step boundaries (checkpoints, membership, faults), hands failures to the recovery, and
// writes the run's outputs (steps.csv, summary.json) through RunOutputs.
#pragma once
#include <vector>

#include "balancenet/metrics/CpuThrottleSampler.h"
#include "balancenet/metrics/ProgressLine.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/trainer/StepEngine.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::trainer {

class StopRule;

struct RunParts {
  StepEngine& engine;
  std::vector<StepBoundary*> boundaries{};  // called after each step, in this order
  FailureRecovery* recovery = nullptr;      // null: a failure ends run() with the exception
};

class RunLoop {
 public:
  RunLoop(TrainerOptions options, RunParts parts);

  // Steps from the engine's stepsDone() (a resumed run goes on from there) to options.steps. Collective.
  metrics::RunSummary run();

 private:
  struct RunState;  // what run() has gathered so far

  metrics::EvalPoint evaluateNow(double trainSeconds);
  metrics::Progress progressOf(metrics::Progress p) const;  // in the run's rate unit

  // The phases of run(), numbered as in docs/architecture.md's "The run loop" (3, the boundaries, is run()'s).
  // 1. One engine step, its row kept; returns its wall time in seconds, also added to the training time.
  double timedStep(RunState& state);
  // 2. Every --eval-every steps: an evaluation, which the stop rule sees.
  void evaluateOnCadence(RunState& state, StopRule& stop, int64_t done);
  // 4. The progress line, every --progress-seconds on rank 0.
  void printProgress(RunState& state, const StopRule& stop);
  // 6. The final evaluation, unless the last step had one.
  void evaluateAtEnd(RunState& state);
  // Why the run stopped before --steps, if it did.
  void announceStop(const StopRule& stop) const;
  // The summary's common fields, then the engine's. `steps` and `samples`: this run's.
  metrics::RunSummary summarise(const RunState& state, const StopRule& stop, int64_t steps, int64_t samples);
  // steps.csv and summary.json, the engine's own files, then the final line.
  void writeOutputs(const RunState& state, metrics::RunSummary& summary, int64_t steps, int64_t samples);

  TrainerOptions options_;
  RunParts parts_;
  metrics::CpuThrottleSampler throttle_;  // each step's row: how long the CPU quota stalled this worker
};

}  // namespace balancenet::trainer

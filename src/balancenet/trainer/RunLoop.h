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
  metrics::EvalPoint evaluateNow(double trainSeconds);
  metrics::Progress progressOf(metrics::Progress p) const;  // in the run's rate unit

  TrainerOptions options_;
  RunParts parts_;
  metrics::CpuThrottleSampler throttle_;  // each step's row: how long the CPU quota stalled this worker
};

}  // namespace balancenet::trainer

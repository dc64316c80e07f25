// StepEngine: one way of training (data parallel, pipeline) seen as a sequence of global steps. The run
// loop (RunLoop) drives any engine: it owns the evaluation cadence, the progress lines, the step boundaries,
// recovery and the run's outputs, so each engine implements only what differs between them.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include <c10/core/Device.h>

#include "balancenet/comm/group/Collectives.h"
#include "balancenet/core/Split.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepRecord.h"
#include "balancenet/trainer/TrainingState.h"

namespace balancenet::trainer {

// What a checkpoint keeps of an engine: the training state (whole on world rank 0) and the allocator's.
struct EngineCheckpoint {
  TrainingState training;
  std::string allocator;  // Allocator::saveState of the split's decider; empty: none
};

class StepEngine {
 public:
  virtual ~StepEngine() = default;

  // One global step on every rank of the world; returns this rank's row of steps.csv.
  virtual metrics::StepRecord step() = 0;
  // Whether evaluate() has a test set to use.
  virtual bool canEvaluate() const = 0;
  // Collective: the model after stepsDone() steps on the test set; every rank returns the same point.
  virtual metrics::EvalPoint evaluate() = 0;

  virtual int64_t stepsDone() const = 0;
  virtual int64_t samplesDone() const = 0;  // samples trained in all steps so far, resumed ones included
  virtual const Split& lastSplit() const = 0;
  // The group whose rank 0 prints and writes the run's outputs (another after a membership change: ask
  // again each time).
  virtual comm::Collectives& world() const = 0;

  // Collective: what a checkpoint keeps, complete on world rank 0 (other ranks' may be partial).
  virtual EngineCheckpoint checkpointState() = 0;
  // Collective: continues from what checkpointState() returned on rank 0, as if its steps had been taken
  // here; `sameWorld`: the checkpoint was written by a world of this size (the allocator's state applies).
  // `checkpoint.training.rng` is this rank's generator (undefined: leave it), `gpuRng` its GPU's.
  virtual void restoreCheckpoint(const EngineCheckpoint& checkpoint, bool sameWorld) = 0;
  // Where this rank computes: a checkpoint keeps a GPU's generator beside the CPU's (dropout masks are drawn there).
  virtual c10::Device device() const { return c10::Device(c10::DeviceType::CPU); }

  // Collective, once after the last step and before the outputs are written: this engine's summary fields.
  virtual void describe(metrics::RunSummary& summary) = 0;
  // Collective, once after steps.csv and summary.json: this engine's own files (layers.csv, pipeline.csv,
  // the timeline). `runDir` may be empty (no run directory).
  virtual void writeOutputs(const std::string& runDir) = 0;
  // Appended to the final progress line ("  bubble 12.3%"); empty: nothing.
  virtual std::string finalNote(const metrics::RunSummary& summary) const { return ""; }
};

// Work between steps that is not training (checkpoints, membership changes, injected faults): the run loop
// calls every boundary after each step, on every rank, in the same order, so a boundary may be collective.
// `totalSteps` is the step the run may end at next: --steps, or earlier with a StopRule (the step itself when
// the run ends there), so a boundary plans nothing past it.
class StepBoundary {
 public:
  virtual ~StepBoundary() = default;
  virtual void afterStep(StepEngine& engine, int64_t totalSteps) = 0;
};

// What the run loop does when a step, a boundary or an evaluation throws (a peer died, a collective timed
// out). recover() either throws (the run ends) or returns after it has rewired the engine to a new group
// and restored a committed state: the loop then goes on from engine.stepsDone().
class FailureRecovery {
 public:
  virtual ~FailureRecovery() = default;
  virtual void recover(StepEngine& engine, const std::exception& failure) = 0;
};

}  // namespace balancenet::trainer

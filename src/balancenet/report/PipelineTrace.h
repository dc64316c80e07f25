// PipelineTrace: pipeline.csv (every forward and backward of a pipelined run's last steps) read back, and
// what one step's actions say about each rank's idle time (the bubble).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::report {

// One row of pipeline.csv (step,rank,stage,replica,kind,micro,start_ms,end_ms): one micro-batch's forward
// or backward on one rank; times in ms on a clock common to all ranks of the machine.
struct PipelineAction {
  int64_t step = 0;
  int rank = 0, stage = 0, replica = 0;
  bool backward = false;  // kind B; F is a forward
  int micro = 0;
  double startMs = 0, endMs = 0;
};

// Throws UsageError naming the file (and the line) when it cannot be read, lacks a column, has a field
// that is not a number (or F/B for kind), an action that ends before it starts, or no action at all.
std::vector<PipelineAction> readPipelineCsv(const std::string& path);

// The actions of `step`; step < 0 picks the last step present. UsageError when the step has none.
std::vector<PipelineAction> actionsOfStep(const std::vector<PipelineAction>& actions, int64_t step = -1);

struct RankIdle {
  int rank = 0, stage = 0, replica = 0;
  double busyMs = 0;          // time covered by this rank's actions
  double bubbleFraction = 0;  // idle share of the step's span: 1 - busy / span
};

struct StepIdle {
  int64_t step = 0;
  double spanMs = 0;                 // the whole pipeline's first action's start to its last action's end
  std::vector<RankIdle> ranks;       // by stage, then replica (the chart's lanes, top to bottom)
  double meanBubbleFraction = 0;     // over the ranks
  int stages = 0, microBatches = 0;  // distinct stages and micro-batch numbers seen in the step
};

// Per rank, busy time and bubble fraction of one step's actions (all from the same step).
StepIdle pipelineIdle(const std::vector<PipelineAction>& stepActions);

}  // namespace balancenet::report

// ScheduleRunner: one stage's part of one pipelined step: its forwards and backwards in schedule order,
// activations in and out by point-to-point messages.
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/core/Timeline.h"
#include "balancenet/models/Blocks.h"
#include "balancenet/objective/Objective.h"
#include "balancenet/pipeline/PipelineGroups.h"
#include "balancenet/pipeline/Schedule.h"

namespace balancenet::pipeline {

// What a stage did in one step, for steps.csv and the schedule picture.
struct StageOutcome {
  double lossSum = 0;    // last stage: sum over its micro-batches of (sum of per-sample losses) / B
  double computeMs = 0;  // forwards and backwards (with the emulated slowdown)
  double recvMs = 0;     // blocked in receives: the neighbour had not sent yet, or the bytes were in flight
  double sendMs = 0;     // waiting, after the last action, for the peers to take this stage's messages
  int64_t bytesSent = 0;
  int64_t bytesReceived = 0;
};

// One drawn action: a micro-batch's forward or backward on this rank, in ms since the job's origin.
struct ActionSpan {
  int64_t step;
  Action action;
  double startMs;
  double endMs;
};

struct StepInput {
  int64_t step = 0;
  std::vector<int64_t> microSizes;                  // this column's micro-batches, in order
  at::Tensor inputs;                                // first stage: the column's samples of the step; else undefined
  at::Tensor targets;                               // last stage: their targets; else undefined
  const objective::Objective* objective = nullptr;  // last stage: the loss of the targets
  double globalBatch = 1;  // B: every loss is divided by it, so gradients add up to the batch's
  double slowdown = 1;     // emulated: each compute lasts this many times its real time
};

class ScheduleRunner {
 public:
  // `inputShape`: one sample's activation entering this stage (unused at the first stage).
  // `origin`: the clock reading all ranks count action times from.
  ScheduleRunner(PipelineGroups& groups, models::BlockRange& stage, ScheduleKind kind, std::vector<int64_t> inputShape,
                 Timeline::Clock::time_point origin);

  // Runs this stage's action list for the step. Gradients accumulate into the stage's parameters'
  // .grad(); the caller zeroes them before and synchronises them after. Sends are posted without
  // waiting, receives block: with the schedules' order this cannot deadlock (docs/pipeline.md).
  StageOutcome run(const StepInput& input, Timeline* timeline, std::vector<ActionSpan>& spans);

  // Tags pair each send with its receive: unique per step (modulo a wrap beyond the one step in flight),
  // micro-batch (fewer than kMaxMicroBatches, MicroBatches.h) and direction; all below 1 << 27.
  static int tagFor(int64_t step, int micro, Action::Kind direction);

 private:
  struct StepState;  // one step's state on this stage, shared by its actions

  double sinceOriginMs(Timeline::Clock::time_point t) const;
  // F(m): the micro-batch (the column's rows, or the activation received from the previous stage) through the
  // stage, and on the last the loss; the activation is sent on to the next stage.
  void runForward(const Action& action, StepState& s);
  // B(m): the gradient (of the loss, or received from the next stage) back through the stage; the input's
  // gradient is sent back to the previous stage.
  void runBackward(const Action& action, StepState& s);
  // Runs `compute`, the work of `action`, under its timeline span and stretched to the emulated slowdown: it
  // counts as the step's compute and is drawn in the step's spans.
  template <typename Compute>
  void timeAction(const Action& action, StepState& s, Compute&& compute);
  // Posts `t` to `peer` without waiting.
  comm::PendingWork post(StepState& s, const at::Tensor& t, int peer, int tag);
  // Receives into `t`, blocking: the wait counts as the step's receive time.
  void receive(StepState& s, at::Tensor& t, int peer, int tag);
  // After the last action: waits for the sends still in flight (the step's send time).
  void awaitSends(StepState& s);

  PipelineGroups& groups_;
  models::BlockRange& stage_;
  ScheduleKind kind_;
  std::vector<int64_t> inputShape_;
  Timeline::Clock::time_point origin_;
};

}  // namespace balancenet::pipeline

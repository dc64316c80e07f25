// Executing a schedule's actions for one stage.
#include "balancenet/pipeline/ScheduleRunner.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <thread>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/pipeline/MicroBatches.h"

namespace balancenet::pipeline {
namespace {

// Steps in flight at once: 1 (a flushed pipeline); the wrap keeps tags in range, and a step's tags still differ
// from its neighbours'. Training tags stay below 1 << 27, where the re-partition's move tags begin.
constexpr int64_t kStepWrap = 4;
static_assert(kStepWrap * kMaxMicroBatches * 2 <= (int64_t{1} << 27), "training tags reach the move tags");

// Emulated slowness: the compute just done, stretched to `slowdown` times its length.
void stretch(const Stopwatch& watch, double slowdown) {
  if (slowdown <= 1) return;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(watch.elapsedMs() * (slowdown - 1)));
}

std::vector<int64_t> batchShape(int64_t rows, const std::vector<int64_t>& perSample) {
  std::vector<int64_t> shape{rows};
  shape.insert(shape.end(), perSample.begin(), perSample.end());
  return shape;
}

}  // namespace

ScheduleRunner::ScheduleRunner(PipelineGroups& groups, models::BlockRange& stage, ScheduleKind kind,
                               std::vector<int64_t> inputShape, Timeline::Clock::time_point origin)
    : groups_(groups), stage_(stage), kind_(kind), inputShape_(std::move(inputShape)), origin_(origin) {}

int ScheduleRunner::tagFor(int64_t step, int micro, Action::Kind direction) {
  if (micro < 0 || micro >= kMaxMicroBatches)
    throw InternalError(fmt::format("micro-batch {} beyond the {} a step may have", micro, kMaxMicroBatches));
  return static_cast<int>(((step % kStepWrap) * kMaxMicroBatches + micro) * 2 + (direction == Action::Backward));
}

double ScheduleRunner::sinceOriginMs(Timeline::Clock::time_point t) const {
  return std::chrono::duration<double, std::milli>(t - origin_).count();
}

struct ScheduleRunner::StepState {
  StepState(bool firstStage, bool lastStage, const StepInput& stepInput, Timeline* stepTimeline,
            std::vector<ActionSpan>& drawn)
      : first(firstStage),
        last(lastStage),
        input(stepInput),
        timeline(stepTimeline),
        spans(drawn),
        offsets(microBatchOffsets(stepInput.microSizes)),
        inputs(stepInput.microSizes.size()),
        outputs(stepInput.microSizes.size()),
        forwardSends(stepInput.microSizes.size()) {}

  const bool first, last;  // this stage's place in the pipeline
  const StepInput& input;
  Timeline* timeline;
  std::vector<ActionSpan>& spans;
  const std::vector<int64_t> offsets;  // each micro-batch's first row among the column's samples
  // Per micro-batch, what its backward needs: the stage's input (whose gradient goes back) and its
  // output (the loss on the last stage). Released by the backward, so 1F1B holds fewer at once.
  std::vector<at::Tensor> inputs, outputs;
  // A send holds its tensor until it completes. The activation sent after F(m) is released at B(m): the
  // gradient of m arriving from the right proves the right neighbour took it, so that wait is immediate
  // and 1F1B's bound on held activations holds for sent ones too. Gradients sent left wait for the end.
  std::vector<comm::PendingWork> forwardSends;
  std::vector<comm::PendingWork> backwardSends;
  StageOutcome out;
};

StageOutcome ScheduleRunner::run(const StepInput& input, Timeline* timeline, std::vector<ActionSpan>& spans) {
  const int micros = static_cast<int>(input.microSizes.size());
  const auto actions = stageActions(kind_, groups_.stageIndex(), groups_.topology.stages, micros);
  StepState s(groups_.firstStage(), groups_.lastStage(), input, timeline, spans);
  for (const Action& a : actions) {
    if (a.kind == Action::Forward)
      runForward(a, s);
    else
      runBackward(a, s);
  }
  awaitSends(s);
  return s.out;
}

template <typename Compute>
void ScheduleRunner::timeAction(const Action& a, StepState& s, Compute&& compute) {
  const auto start = Timeline::Clock::now();
  Stopwatch watch;
  {
    Timeline::Span span(s.timeline, fmt::format("{}{}", a.kind == Action::Forward ? 'F' : 'B', a.micro), "pipeline");
    compute();
    stretch(watch, s.input.slowdown);
  }
  s.out.computeMs += watch.elapsedMs();
  s.spans.push_back({s.input.step, a, sinceOriginMs(start), sinceOriginMs(Timeline::Clock::now())});
}

void ScheduleRunner::runForward(const Action& a, StepState& s) {
  const StepInput& input = s.input;
  const int m = a.micro;
  at::Tensor x;
  if (s.first) {
    x = input.inputs.narrow(0, s.offsets[m], input.microSizes[m]);
  } else {
    x = at::empty(batchShape(input.microSizes[m], inputShape_), at::kFloat);
    receive(s, x, groups_.previousRank(), tagFor(input.step, m, Action::Forward));
    x.requires_grad_(true);
  }
  timeAction(a, s, [&] {
    auto y = stage_.forward(x);
    if (s.last) {
      auto target = input.targets.narrow(0, s.offsets[m], input.microSizes[m]);
      y = input.objective->trainingLossSum(y, target) / input.globalBatch;
      s.out.lossSum += y.item<double>();
    }
    s.outputs[m] = y;
  });
  s.inputs[m] = x;
  if (!s.last)
    s.forwardSends[m] = post(s, s.outputs[m].detach(), groups_.nextRank(), tagFor(input.step, m, Action::Forward));
}

void ScheduleRunner::runBackward(const Action& a, StepState& s) {
  const int m = a.micro;
  at::Tensor gradient;
  if (!s.last) {
    gradient = at::empty(s.outputs[m].sizes(), at::kFloat);
    receive(s, gradient, groups_.nextRank(), tagFor(s.input.step, m, Action::Backward));
    s.forwardSends[m].wait();
  }
  timeAction(a, s, [&] {
    if (s.last)
      s.outputs[m].backward();
    else
      s.outputs[m].backward(gradient);
  });
  if (!s.first)
    s.backwardSends.push_back(
        post(s, s.inputs[m].grad(), groups_.previousRank(), tagFor(s.input.step, m, Action::Backward)));
  s.inputs[m] = at::Tensor();
  s.outputs[m] = at::Tensor();
}

comm::PendingWork ScheduleRunner::post(StepState& s, const at::Tensor& t, int peer, int tag) {
  auto message = t.contiguous();
  s.out.bytesSent += message.nbytes();
  return groups_.world.sendAsync(message, peer, tag);
}

void ScheduleRunner::receive(StepState& s, at::Tensor& t, int peer, int tag) {
  Timeline::Span span(s.timeline, "recv", "pipeline", Timeline::kCommunication);
  Stopwatch watch;
  groups_.world.recv(t, peer, tag);
  s.out.recvMs += watch.elapsedMs();
  s.out.bytesReceived += t.nbytes();
}

void ScheduleRunner::awaitSends(StepState& s) {
  Stopwatch watch;
  for (auto& send : s.forwardSends) send.wait();  // already done where a backward followed
  for (auto& send : s.backwardSends) send.wait();
  s.out.sendMs = watch.elapsedMs();
}

}  // namespace balancenet::pipeline

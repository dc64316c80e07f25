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

StageOutcome ScheduleRunner::run(const StepInput& input, Timeline* timeline, std::vector<ActionSpan>& spans) {
  const bool first = groups_.firstStage(), last = groups_.lastStage();
  const int micros = static_cast<int>(input.microSizes.size());
  const auto offsets = microBatchOffsets(input.microSizes);
  const auto actions = stageActions(kind_, groups_.stageIndex(), groups_.topology.stages, micros);
  // Per micro-batch, what its backward needs: the stage's input (whose gradient goes back) and its
  // output (the loss on the last stage). Released by the backward, so 1F1B holds fewer at once.
  std::vector<at::Tensor> inputs(micros), outputs(micros);
  // A send holds its tensor until it completes. The activation sent after F(m) is released at B(m): the
  // gradient of m arriving from the right proves the right neighbour took it, so that wait is immediate
  // and 1F1B's bound on held activations holds for sent ones too. Gradients sent left wait for the end.
  std::vector<comm::PendingWork> forwardSends(micros);
  std::vector<comm::PendingWork> backwardSends;
  StageOutcome out;
  auto post = [&](const at::Tensor& t, int peer, int tag) {
    auto message = t.contiguous();
    out.bytesSent += message.nbytes();
    return groups_.world.sendAsync(message, peer, tag);
  };
  auto receive = [&](at::Tensor& t, int peer, int tag) {
    Timeline::Span span(timeline, "recv", "pipeline", Timeline::kCommunication);
    Stopwatch watch;
    groups_.world.recv(t, peer, tag);
    out.recvMs += watch.elapsedMs();
    out.bytesReceived += t.nbytes();
  };

  for (const Action& a : actions) {
    const int m = a.micro;
    if (a.kind == Action::Forward) {
      at::Tensor x;
      if (first) {
        x = input.inputs.narrow(0, offsets[m], input.microSizes[m]);
      } else {
        x = at::empty(batchShape(input.microSizes[m], inputShape_), at::kFloat);
        receive(x, groups_.previousRank(), tagFor(input.step, m, Action::Forward));
        x.requires_grad_(true);
      }
      const auto start = Timeline::Clock::now();
      Stopwatch watch;
      {
        Timeline::Span span(timeline, fmt::format("F{}", m), "pipeline");
        auto y = stage_.forward(x);
        if (last) {
          auto target = input.targets.narrow(0, offsets[m], input.microSizes[m]);
          y = input.objective->trainingLossSum(y, target) / input.globalBatch;
          out.lossSum += y.item<double>();
        }
        outputs[m] = y;
        stretch(watch, input.slowdown);
      }
      out.computeMs += watch.elapsedMs();
      spans.push_back({input.step, a, sinceOriginMs(start), sinceOriginMs(Timeline::Clock::now())});
      inputs[m] = x;
      if (!last)
        forwardSends[m] = post(outputs[m].detach(), groups_.nextRank(), tagFor(input.step, m, Action::Forward));
    } else {
      at::Tensor gradient;
      if (!last) {
        gradient = at::empty(outputs[m].sizes(), at::kFloat);
        receive(gradient, groups_.nextRank(), tagFor(input.step, m, Action::Backward));
        forwardSends[m].wait();
      }
      const auto start = Timeline::Clock::now();
      Stopwatch watch;
      {
        Timeline::Span span(timeline, fmt::format("B{}", m), "pipeline");
        if (last)
          outputs[m].backward();
        else
          outputs[m].backward(gradient);
        stretch(watch, input.slowdown);
      }
      out.computeMs += watch.elapsedMs();
      spans.push_back({input.step, a, sinceOriginMs(start), sinceOriginMs(Timeline::Clock::now())});
      if (!first)
        backwardSends.push_back(
            post(inputs[m].grad(), groups_.previousRank(), tagFor(input.step, m, Action::Backward)));
      inputs[m] = at::Tensor();
      outputs[m] = at::Tensor();
    }
  }
  Stopwatch watch;
  for (auto& s : forwardSends) s.wait();  // already done where a backward followed
  for (auto& s : backwardSends) s.wait();
  out.sendMs = watch.elapsedMs();
  return out;
}

}  // namespace balancenet::pipeline

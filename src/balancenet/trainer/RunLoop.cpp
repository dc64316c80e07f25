// The run loop. Rank 0 of the engine's world prints and writes: that may be another process after a
// membership change, so the test is made each time.
#include "balancenet/trainer/RunLoop.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/metrics/ProgressLine.h"
#include "balancenet/metrics/RetakenRows.h"
#include "balancenet/metrics/TimeToAccuracy.h"
#include "balancenet/trainer/RunOutputs.h"
#include "balancenet/trainer/StopRule.h"

namespace balancenet::trainer {

RunLoop::RunLoop(TrainerOptions options, RunParts parts) : options_(std::move(options)), parts_(std::move(parts)) {}

metrics::EvalPoint RunLoop::evaluateNow(double trainSeconds) {
  auto point = parts_.engine.evaluate();
  point.trainSeconds = trainSeconds;
  if (parts_.engine.world().rank() == 0)
    spdlog::info("eval at step {}: {}", point.step, metrics::formatEval(point, options_.metricStyle));
  return point;
}

metrics::Progress RunLoop::progressOf(metrics::Progress p) const {
  p.rateUnit = options_.metricStyle.rateUnit;
  p.unitsPerSample = options_.metricStyle.unitsPerSample;
  p.budgetSeconds = options_.timeBudgetS;
  return p;
}

struct RunLoop::RunState {
  RunState(int64_t stepsDone, int64_t samplesDone) : firstStep(stepsDone), samplesBefore(samplesDone) {}

  const int64_t firstStep, samplesBefore;  // the engine's counts at the start: a resumed run's are not 0
  std::vector<metrics::StepRecord> records;
  std::vector<metrics::EvalPoint> evals;
  double trainSeconds = 0;
  Stopwatch sinceProgress;  // since the last progress line
};

metrics::RunSummary RunLoop::run() {
  auto& engine = parts_.engine;
  RunState state(engine.stepsDone(), engine.samplesDone());
  if (options_.stopAtAccuracy > 0 && !engine.canEvaluate())
    throw UsageError("--stop-at-accuracy needs a test set to evaluate on");
  StopRule stop(options_);
  // The whole group evaluates at once: not a worker that joins a running job (its state arrives instead).
  if (options_.evalAtStart && engine.canEvaluate() && options_.broadcastInitialModel)
    state.evals.push_back(evaluateNow(0));

  while (!stop.endsAt(engine.stepsDone())) {
    try {
      const double stepSeconds = timedStep(state);
      const int64_t done = engine.stepsDone();
      // The step's model is evaluated, and the end agreed, by the group that trained it, before the boundaries
      // may change the group: a joiner admitted there starts with the next step, and takes no part in these.
      evaluateOnCadence(state, stop, done);
      stop.agreeOnTime(engine.world(), done, state.trainSeconds, stepSeconds);
      // At the end the boundaries are told so (the last checkpoint); before a step the run may end at, they
      // admit no worker.
      for (auto* boundary : parts_.boundaries) boundary->afterStep(engine, stop.horizon(done));
      printProgress(state, stop);
    } catch (const std::exception& failure) {
      if (!parts_.recovery) throw;
      parts_.recovery->recover(engine, failure);
      metrics::dropRetakenRows(state.records, state.evals, engine.stepsDone());  // 5. the steps taken again
    }
  }
  evaluateAtEnd(state);
  announceStop(stop);
  // Rates count this run's steps only: a resumed run did not train the steps before it.
  const int64_t steps = engine.stepsDone() - state.firstStep, samples = engine.samplesDone() - state.samplesBefore;
  metrics::RunSummary summary = summarise(state, stop, steps, samples);
  writeOutputs(state, summary, steps, samples);
  return summary;
}

double RunLoop::timedStep(RunState& state) {
  Stopwatch watch;
  throttle_.markStepStart();
  state.records.push_back(parts_.engine.step());
  throttle_.stampStep(state.records.back());
  const double stepSeconds = watch.elapsedMs() / 1000.0;
  state.trainSeconds += stepSeconds;
  return stepSeconds;
}

void RunLoop::evaluateOnCadence(RunState& state, StopRule& stop, int64_t done) {
  const auto& o = options_;
  if (parts_.engine.canEvaluate() && o.evalEvery > 0 && done % o.evalEvery == 0 && done < o.steps) {
    state.evals.push_back(evaluateNow(state.trainSeconds));
    stop.observe(state.evals.back());
  }
}

void RunLoop::printProgress(RunState& state, const StopRule& stop) {
  auto& engine = parts_.engine;
  const auto& o = options_;
  // The last line waits for the run's outputs, which bring every worker's efficiency.
  if (engine.world().rank() == 0 && o.progressSeconds > 0 && !stop.endsAt(engine.stepsDone()) &&
      state.sinceProgress.elapsedMs() >= o.progressSeconds * 1000) {
    const auto& last = state.records.back();
    std::string line = metrics::formatProgress(progressOf(
        {engine.stepsDone(), o.steps, state.trainSeconds, engine.samplesDone() - state.samplesBefore, last.loss}));
    // Loading should never be the bottleneck; say so when it takes a tenth of a step.
    if (last.updateMs > 0 && last.dataMs > 0.1 * last.updateMs)
      line += fmt::format("  data loading {:.0f}% of the step", 100 * last.dataMs / last.updateMs);
    spdlog::info(line);
    state.sinceProgress.restart();
  }
}

void RunLoop::evaluateAtEnd(RunState& state) {
  auto& engine = parts_.engine;
  const bool evaluatedLast = !state.evals.empty() && state.evals.back().step == engine.stepsDone();
  if (engine.canEvaluate() && options_.evalAtEnd && !evaluatedLast)
    state.evals.push_back(evaluateNow(state.trainSeconds));
}

void RunLoop::announceStop(const StopRule& stop) const {
  auto& engine = parts_.engine;
  const auto& o = options_;
  if (engine.world().rank() == 0 && stop.reason() != StopReason::Steps)
    spdlog::info("stopped at step {} of {}: {}", engine.stepsDone(), o.steps,
                 stop.reason() == StopReason::Accuracy
                     ? fmt::format("test accuracy reached --stop-at-accuracy {:g}", o.stopAtAccuracy)
                     : fmt::format("training time reached --time-budget-s {:g}", o.timeBudgetS));
}

metrics::RunSummary RunLoop::summarise(const RunState& state, const StopRule& stop, int64_t steps, int64_t samples) {
  auto& engine = parts_.engine;
  const auto& o = options_;
  metrics::RunSummary summary;
  summary.model = o.modelName;
  summary.worldSize = engine.world().size();
  summary.globalBatch = o.globalBatch;
  summary.steps = engine.stepsDone();
  summary.split = engine.lastSplit().str();
  summary.extra["effective_global_batch"] = steps > 0 ? static_cast<double>(samples) / steps : 0.0;
  summary.extra["samples_trained"] = static_cast<double>(engine.samplesDone());
  summary.trainSeconds = state.trainSeconds;
  summary.samplesPerSecond = state.trainSeconds > 0 ? samples / state.trainSeconds : 0;
  summary.finalLoss = state.records.empty() ? 0 : state.records.back().loss;
  summary.evals = state.evals;
  summary.extra["time_to_accuracy"] = metrics::timeToAccuracy(state.evals, o.stopAtAccuracy);
  summary.extra["eval_samples"] = state.evals.empty() ? 0 : state.evals.back().samples;  // of each evaluation
  summary.extra["stopped_by"] = toString(stop.reason());
  metrics::addStyleFields(summary, o.metricStyle);
  engine.describe(summary);
  return summary;
}

void RunLoop::writeOutputs(const RunState& state, metrics::RunSummary& summary, int64_t steps, int64_t samples) {
  auto& engine = parts_.engine;
  const auto& o = options_;
  const auto efficiency = writeRunOutputs(engine.world(), state.records, summary, o.runDir, o.capacity);
  engine.writeOutputs(o.runDir);
  if (engine.world().rank() == 0 && o.progressSeconds > 0 && steps > 0) {
    auto line = metrics::formatProgress(
        progressOf({engine.stepsDone(), o.steps, state.trainSeconds, samples, summary.finalLoss}));
    if (o.capacity.peak.oneThread > 0) line += "  " + metrics::formatEfficiency(efficiency);
    spdlog::info(line + engine.finalNote(summary));
  }
}

}  // namespace balancenet::trainer

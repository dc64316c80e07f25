// The run loop. Rank 0 of the engine's world prints and writes: that may be another process after a
// membership change, so the test is made each time.
#include "balancenet/trainer/RunLoop.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/metrics/ProgressLine.h"
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

metrics::RunSummary RunLoop::run() {
  auto& engine = parts_.engine;
  const auto& o = options_;
  std::vector<metrics::StepRecord> records;
  std::vector<metrics::EvalPoint> evals;
  double trainSeconds = 0;
  const int64_t firstStep = engine.stepsDone(), samplesBefore = engine.samplesDone();
  Stopwatch sinceProgress;
  if (o.stopAtAccuracy > 0 && !engine.canEvaluate())
    throw UsageError("--stop-at-accuracy needs a test set to evaluate on");
  StopRule stop(o);

  while (!stop.endsAt(engine.stepsDone())) {
    try {
      Stopwatch watch;
      throttle_.markStepStart();
      records.push_back(engine.step());
      throttle_.stampStep(records.back());
      const double stepSeconds = watch.elapsedMs() / 1000.0;
      trainSeconds += stepSeconds;
      const int64_t done = engine.stepsDone();
      // The step's model is evaluated, and the end agreed, by the group that trained it, before the boundaries
      // may change the group: a joiner admitted there starts with the next step, and takes no part in these.
      if (engine.canEvaluate() && o.evalEvery > 0 && done % o.evalEvery == 0 && done < o.steps) {
        evals.push_back(evaluateNow(trainSeconds));
        stop.observe(evals.back());
      }
      stop.agreeOnTime(engine.world(), done, trainSeconds, stepSeconds);
      // At the end the boundaries are told so (the last checkpoint); before a step the run may end at, they
      // admit no worker.
      for (auto* boundary : parts_.boundaries) boundary->afterStep(engine, stop.horizon(done));
      // The last line waits for the run's outputs, which bring every worker's efficiency.
      if (engine.world().rank() == 0 && o.progressSeconds > 0 && !stop.endsAt(engine.stepsDone()) &&
          sinceProgress.elapsedMs() >= o.progressSeconds * 1000) {
        const auto& last = records.back();
        std::string line = metrics::formatProgress(
            progressOf({engine.stepsDone(), o.steps, trainSeconds, engine.samplesDone() - samplesBefore, last.loss}));
        // Loading should never be the bottleneck; say so when it takes a tenth of a step.
        if (last.updateMs > 0 && last.dataMs > 0.1 * last.updateMs)
          line += fmt::format("  data loading {:.0f}% of the step", 100 * last.dataMs / last.updateMs);
        spdlog::info(line);
        sinceProgress.restart();
      }
    } catch (const std::exception& failure) {
      if (!parts_.recovery) throw;
      parts_.recovery->recover(engine, failure);
      // Steps after the restored state are taken again, by the new group: their old rows go.
      while (!records.empty() && records.back().step >= engine.stepsDone()) records.pop_back();
      while (!evals.empty() && evals.back().step > engine.stepsDone()) evals.pop_back();
    }
  }
  const bool evaluatedLast = !evals.empty() && evals.back().step == engine.stepsDone();
  if (engine.canEvaluate() && o.evalAtEnd && !evaluatedLast) evals.push_back(evaluateNow(trainSeconds));
  if (engine.world().rank() == 0 && stop.reason() != StopReason::Steps)
    spdlog::info("stopped at step {} of {}: {}", engine.stepsDone(), o.steps,
                 stop.reason() == StopReason::Accuracy
                     ? fmt::format("test accuracy reached --stop-at-accuracy {:g}", o.stopAtAccuracy)
                     : fmt::format("training time reached --time-budget-s {:g}", o.timeBudgetS));

  metrics::RunSummary summary;
  summary.model = o.modelName;
  summary.worldSize = engine.world().size();
  summary.globalBatch = o.globalBatch;
  summary.steps = engine.stepsDone();
  summary.split = engine.lastSplit().str();
  // Rates count this run's steps only: a resumed run did not train the steps before it.
  const int64_t steps = engine.stepsDone() - firstStep, samples = engine.samplesDone() - samplesBefore;
  summary.extra["effective_global_batch"] = steps > 0 ? static_cast<double>(samples) / steps : 0.0;
  summary.extra["samples_trained"] = static_cast<double>(engine.samplesDone());
  summary.trainSeconds = trainSeconds;
  summary.samplesPerSecond = trainSeconds > 0 ? samples / trainSeconds : 0;
  summary.finalLoss = records.empty() ? 0 : records.back().loss;
  summary.evals = evals;
  summary.extra["time_to_accuracy"] = metrics::timeToAccuracy(evals, o.stopAtAccuracy);
  summary.extra["stopped_by"] = toString(stop.reason());
  metrics::addStyleFields(summary, o.metricStyle);
  engine.describe(summary);
  const auto efficiency = writeRunOutputs(engine.world(), records, summary, o.runDir, o.capacity);
  engine.writeOutputs(o.runDir);
  if (engine.world().rank() == 0 && o.progressSeconds > 0 && steps > 0) {
    auto line =
        metrics::formatProgress(progressOf({engine.stepsDone(), o.steps, trainSeconds, samples, summary.finalLoss}));
    if (o.capacity.peak.oneThread > 0) line += "  " + metrics::formatEfficiency(efficiency);
    spdlog::info(line + engine.finalNote(summary));
  }
  return summary;
}

}  // namespace balancenet::trainer

// The run's and its results' flags: declared for train (the results group for launch and federate too).
#include "balancenet/cli/flags/ResultFlags.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/job/JobDefaults.h"

namespace balancenet::cli {
using job::JobConfig;

// The length of the run, its seed, and its trace (train declares --global-batch before them, AllocationFlags.h).
void addRunFlags(CLI::App& app, JobConfig& c) {
  auto& t = c.trainer;
  app.add_option("--timeline", t.timelinePath,
                 "Write a Chrome trace of every rank's forward, backward, messages and waits (chrome://tracing, "
                 "ui.perfetto.dev); its directory is made if missing");
  app.add_option("--steps", t.steps, "Training steps (weight updates)")->capture_default_str();
  app.add_option("--seed", t.seed, "Seed for weights and data order")->capture_default_str();
}

// Evaluation, threads, where results go, logging.
void addOutputFlags(CLI::App& app, JobConfig& c, ResultRaw& raw) {
  auto& t = c.trainer;
  app.add_option("--eval-every", t.evalEvery, "Evaluate test accuracy every N steps (0: only at the end)")
      ->capture_default_str();
  app.add_option("--eval-samples", raw.evalSamples,
                 "Evaluate on N samples of the test set, the same fixed subset (seeded by --seed) at every "
                 "evaluation, instead of the whole set (the default); 0: no evaluation at all, not even at the end; "
                 "summary.json's eval_samples says how many were evaluated")
      ->default_str("");  // unset unless given: the whole test set
  app.add_flag("--eval-at-start", t.evalAtStart,
               "Also evaluate the model before the first step (step 0; a resumed run: before its first step), the "
               "baseline the later evaluations are read against, as Hugging Face's eval_on_start");
  app.add_option("--stop-at-accuracy", t.stopAtAccuracy,
                 "End the run at the first evaluation (every --eval-every steps, which must be > 0) whose test "
                 "accuracy reaches A, in (0, 1]; checkpoints and outputs as at --steps (0: run all --steps)")
      ->capture_default_str();
  app.add_option("--time-budget-s", t.timeBudgetS,
                 "End the run at the step where rank 0's training time (evaluations excluded) reaches T seconds, "
                 "decided one step ahead from the last step's time so every worker ends at the same step (0: no "
                 "budget)")
      ->capture_default_str();
  addResultFlags(app, c, raw);
  app.add_option("--export", c.exportPath,
                 "Write the trained state_dict here for PyTorch: model.load_state_dict(torch.load(FILE)) (atomic)");
}

void addResultFlags(CLI::App& app, JobConfig& c, ResultRaw& raw) {
  app.add_option("--threads", c.threads,
                 "Intra-op and BLAS threads per worker (default: the cores this host allows, its affinity mask and "
                 "cgroup CPU quota, over its local workers, at least 1)")
      ->default_str("");  // the 1 it holds before validation is no default: the host decides
  app.add_option("--run-dir", c.trainer.runDir, "Where steps.csv and summary.json go (default: runs/<time>-<pid>)");
  app.add_option("--progress-seconds", raw.progressSeconds,
                 fmt::format("Seconds between progress lines (default: {:g} on a terminal, {:g} otherwise; 0: none)",
                             job::kTerminalProgressSeconds, job::kLogProgressSeconds));
  app.add_option("--save-params", c.saveParams, "Write the final parameters here (torch::save), atomically");
  app.add_option("--log-level", c.logLevel, "trace, debug, info, warn, error")->capture_default_str();
}

// --eval-every, --eval-samples, --eval-at-start, --stop-at-accuracy, --time-budget-s: when the run evaluates, on
// what, and ends.
void validateStopping(trainer::TrainerOptions& t, const ResultRaw& raw) {
  require(t.evalEvery >= 0, "--eval-every must not be negative");
  if (raw.evalSamples != kUnset) {
    require(raw.evalSamples >= 0, fmt::format("--eval-samples must not be negative, got {}", raw.evalSamples));
    require(raw.evalSamples > 0 || t.evalEvery == 0,
            fmt::format("--eval-every {} evaluates, which --eval-samples 0 turns off", t.evalEvery));
    t.evalSamples = raw.evalSamples;
    t.evalAtEnd = raw.evalSamples > 0;
  }
  require(!t.evalAtStart || t.evalSamples != 0, "--eval-at-start evaluates, which --eval-samples 0 turns off");
  require(t.stopAtAccuracy >= 0 && t.stopAtAccuracy <= 1,
          fmt::format("--stop-at-accuracy must be in (0, 1], got {}", t.stopAtAccuracy));
  require(t.stopAtAccuracy == 0 || t.evalEvery > 0,
          "--stop-at-accuracy needs --eval-every N > 0: the run stops at an evaluation");
  require(t.timeBudgetS >= 0, fmt::format("--time-budget-s must not be negative, got {}", t.timeBudgetS));
}

}  // namespace balancenet::cli

// ResultFlags: the run and what comes out of it: its length, seed and trace (--steps, --seed, --timeline), when it
// evaluates and stops (--eval-every, --eval-samples, --stop-at-accuracy, --time-budget-s), --export, and the results
// group that launch and federate share (--threads, --run-dir, --progress-seconds, --save-params, --log-level).
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/cli/flags/FlagValues.h"

namespace balancenet::trainer {
struct TrainerOptions;
}

namespace balancenet::cli {

// The group's values as given: the progress period settles with the run directory (job/JobDefaults.h).
struct ResultRaw {
  double progressSeconds = -1;  // below 0: the default for a terminal or a log
  int evalSamples = kUnset;     // --eval-samples (train): unset is the whole test set
};

// --timeline, --steps, --seed, into config.trainer.
void addRunFlags(CLI::App& app, job::JobConfig& config);
// --eval-every, --eval-samples (into `raw`), --stop-at-accuracy, --time-budget-s, the results group
// (addResultFlags), --export.
void addOutputFlags(CLI::App& app, job::JobConfig& config, ResultRaw& raw);
// --threads, --run-dir, --progress-seconds (into `raw`), --save-params, --log-level. (job/JobDefaults.h settles the run
// directory and the progress period; each command checks --threads.)
void addResultFlags(CLI::App& app, job::JobConfig& config, ResultRaw& raw);

// --eval-every, --eval-samples (into options.evalSamples; 0 also clears evalAtEnd), --stop-at-accuracy,
// --time-budget-s: when the run evaluates, on what, and when it ends. UsageError naming the flag.
void validateStopping(trainer::TrainerOptions& options, const ResultRaw& raw);

}  // namespace balancenet::cli

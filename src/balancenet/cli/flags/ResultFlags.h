// ResultFlags: the run and what comes out of it: its length, seed and trace (--steps, --seed, --timeline), when it
// evaluates and stops (--eval-every, --stop-at-accuracy, --time-budget-s), --export, and the results group that
// launch and federate share (--threads, --run-dir, --progress-seconds, --save-params, --log-level).
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"

namespace balancenet::trainer {
struct TrainerOptions;
}

namespace balancenet::cli {

// The group's values as given: the progress period settles with the run directory (job/JobDefaults.h).
struct ResultRaw {
  double progressSeconds = -1;  // below 0: the default for a terminal or a log
};

// --timeline, --steps, --seed, into config.trainer.
void addRunFlags(CLI::App& app, job::JobConfig& config);
// --eval-every, --stop-at-accuracy, --time-budget-s, the results group (addResultFlags), --export.
void addOutputFlags(CLI::App& app, job::JobConfig& config, ResultRaw& raw);
// --threads, --run-dir, --progress-seconds (into `raw`), --save-params, --log-level. (job/JobDefaults.h settles the run
// directory and the progress period; each command checks --threads.)
void addResultFlags(CLI::App& app, job::JobConfig& config, ResultRaw& raw);

// --eval-every, --stop-at-accuracy, --time-budget-s: when the run evaluates and ends. UsageError naming the flag.
void validateStopping(const trainer::TrainerOptions& options);

}  // namespace balancenet::cli

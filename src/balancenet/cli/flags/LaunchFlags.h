// LaunchFlags: the flags of `balancenet launch` (train's host, resilience, allocation, emulation and result
// groups, and --python, --no-python), validated into a JobConfig; where its words end and the program begins.
#pragma once
#include <string>
#include <vector>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/launch/ProgramEnvironment.h"

namespace balancenet::cli {

struct LaunchRawFlags {
  RawFlags raw;        // the groups shared with train
  std::string python;  // --python; empty: the Python balancenet was built for when it exists, else python3 on PATH
  bool noPython = false;
};

// Declares launch's flags on `app`, bound to `config` and `raw`.
void addLaunchCommandFlags(CLI::App& app, job::JobConfig& config, LaunchRawFlags& raw);

// After parsing: each value and combination checked (UsageError naming the flag), and what follows filled in:
// the launch shape, --split (then config.split and trainer.globalBatch, its sum; else both unset), the policy,
// the emulation lists, the threads per worker, the progress period when given, and config.program.python
// (resolved; empty with --no-python).
void validateLaunchFlags(job::JobConfig& config, const LaunchRawFlags& raw);

// Flag words only (no program): declared, parsed and validated; reads nothing but them (and, for the python,
// the file system and PATH). Throws UsageError, a parse error included. config.argv is `flagWords`.
job::JobConfig parseLaunchFlags(const std::vector<std::string>& flagWords);

// `balancenet launch WORDS`: the flags before the first word that is not one (or before "--"), and the program
// with its arguments, untouched, after it.
struct LaunchWords {
  std::vector<std::string> flags;
  std::vector<std::string> program;
};
LaunchWords splitLaunchWords(const std::vector<std::string>& words);

}  // namespace balancenet::cli

// LaunchCommand: `balancenet launch [FLAGS] [--] PROGRAM [ARGS...]`: a user's script (or any program) on
// --workers local workers with torchrun's environment, supervised like train's workers.
#pragma once
#include <string>
#include <vector>

#include "balancenet/cli/flags/LaunchFlags.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

// Declares the subcommand (its description, flags and --help footer) on `launch`.
void describeLaunchCommand(CLI::App& launch, job::JobConfig& config, LaunchRawFlags& raw);

// After `launch` parsed `words.flags` into `config` and `raw`: validates them and the program (it exists; a
// script needs its python), settles logging and the run directory, and runs the job. Its exit code; bad input
// throws UsageError.
int runLaunch(const CLI::App& launch, job::JobConfig& config, LaunchRawFlags& raw, const LaunchWords& words);

}  // namespace balancenet::cli

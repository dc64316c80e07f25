// CommandLine: the balancenet command (train, models), parsed with CLI11 into a validated JobConfig.
#pragma once

namespace balancenet::launcher {

// The whole program: parses, dispatches, maps errors to one line and an exit code
// (0 ok, 1 runtime failure, 2 bad input, 130 interrupted).
int runCommandLine(int argc, char** argv);

}  // namespace balancenet::launcher

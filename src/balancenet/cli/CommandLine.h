// CommandLine: the balancenet command (train, models), parsed with CLI11 into a validated JobConfig.
#pragma once

namespace balancenet::cli {

// The whole program: parses, dispatches, maps errors to one line and an exit code
// (0 ok, 1 runtime failure or internal error, 2 bad input, 128 + signal when interrupted: 130 Ctrl-C, 143 SIGTERM).
int runCommandLine(int argc, char** argv);

}  // namespace balancenet::cli

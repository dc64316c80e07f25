// CommandLine: the balancenet command: every subcommand declared with CLI11, parsed, and handed to its own file.
#pragma once

namespace balancenet::cli {

// The whole program: parses, dispatches, maps errors to one line and an exit code
// (0 ok, 1 runtime failure or internal error, 2 bad input, 128 + signal when interrupted: 130 Ctrl-C, 143 SIGTERM).
int runCommandLine(int argc, char** argv);

}  // namespace balancenet::cli

// ProgramEnvironment: what a worker of `balancenet launch` (a user's program, not this binary) finds in its
// environment beyond the identity every worker gets: torchrun's other variables and the launch flags.
#pragma once
#include <string>
#include <vector>

#include "balancenet/job/JobConfig.h"

namespace balancenet::launch {

// The launch flag words as one environment value, joined with '\x1f' (the ASCII unit separator, which no
// flag or path a user types holds); decodeLaunchArgs splits it again. "" decodes to no words.
std::string encodeLaunchArgs(const std::vector<std::string>& words);
std::vector<std::string> decodeLaunchArgs(const std::string& value);

// What one program worker adds to childEnvironment's (WorkerEnvironment.h), as "NAME=value" entries:
// GROUP_RANK, TORCHELASTIC_RESTART_COUNT (`restarts` so far), TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID,
// TORCHELASTIC_USE_AGENT_STORE=True (torch's env:// then connects to the launcher's TCPStore as a client, under
// the prefix /worker/attempt_<restarts>), OMP_NUM_THREADS = c.threads unless `inherited` has it, and
// BALANCENET_LAUNCH_ARGS = encodeLaunchArgs(`launchArgs`).
std::vector<std::string> programVariables(const job::JobConfig& c, int restarts,
                                          const std::vector<std::string>& launchArgs,
                                          const std::vector<std::string>& inherited);

// `inherited` with the directory of balancenet's Python package (next to this binary's build tree: <build>/python,
// or its installed prefix: <prefix>/lib/python3/dist-packages, when it holds balancenet/) first on PYTHONPATH, so a
// launched script imports balancenet.torch without setup.
std::vector<std::string> withPackageOnPythonPath(std::vector<std::string> inherited);

}  // namespace balancenet::launch

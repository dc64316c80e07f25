// ProgramEnvironment: what a worker of `balancenet launch` (a user's program, not this binary) finds in its
// environment beyond the identity and the job every worker gets: torchrun's other variables.
#pragma once
#include <string>
#include <vector>

#include "balancenet/job/JobConfig.h"

namespace balancenet::launch {

// What one program worker adds to childEnvironment's (WorkerEnvironment.h), as "NAME=value" entries:
// GROUP_RANK, TORCHELASTIC_RESTART_COUNT (`restarts` so far), TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID,
// TORCHELASTIC_USE_AGENT_STORE=True (torch's env:// then connects to the launcher's TCPStore as a client, under
// the prefix /worker/attempt_<restarts>), OMP_NUM_THREADS = c.threads and GLOO_SOCKET_IFNAME = the interface Gloo
// listens on (--iface, or the one that routes to the master; none on one machine) unless `inherited` has them. (The job
// itself, BALANCENET_JOB_CONFIG, every child of the launcher gets: LocalLauncher.cpp.)
std::vector<std::string> programVariables(const job::JobConfig& c, int restarts,
                                          const std::vector<std::string>& inherited);

// `inherited` with the directory of balancenet's Python package (next to this binary's build tree: <build>/python,
// or its installed prefix: <prefix>/lib/python3/dist-packages, when it holds balancenet/) first on PYTHONPATH, so a
// launched script imports balancenet.torch without setup.
std::vector<std::string> withPackageOnPythonPath(std::vector<std::string> inherited);

}  // namespace balancenet::launch

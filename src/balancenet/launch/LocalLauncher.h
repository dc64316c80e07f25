// LocalLauncher: starts this machine's workers, forwards their output, and supervises them.
#pragma once
#include <functional>

#include "balancenet/job/JobConfig.h"

namespace balancenet::launch {

// Like torchrun's agent: serves the rendezvous store (node 0), starts nprocPerNode copies of this
// program as workers (RANK, WORLD_SIZE, ... in their environment), prefixes each output line with
// "[rank r]", and when one worker fails stops the others and names it. Ctrl-C (exit 130) or SIGTERM
// (exit 143) stops everyone.
// With --comm ps, node 0 also starts the --ps parameter servers ("[server k]"), supervised the same way.
// With config.program (`balancenet launch`) the workers run that program instead, with torchrun's other variables
// (ProgramEnvironment.h), and the job's store is a TCPStore even on one host (torch's env:// needs one); a failed
// worker stops the others at once and is named with its last output line.
// `config` was checked by the command before (cli/LaunchChecks.h): a launcher only launches. Its processes get it
// resolved (job/JobConfigJson.h), and parse no flags; where the hosts turn out to run another world than
// `config` assumed, `againForTheHosts` resolves it again for theirs (launch.hostWorkers set).
// Returns the process exit code.
using ResolveForHosts = std::function<job::JobConfig(const job::JobConfig&)>;
int launchLocalWorkers(const job::JobConfig& config, const ResolveForHosts& againForTheHosts = {});

}  // namespace balancenet::launch

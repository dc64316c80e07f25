// SchedulerEnvironment: who this process is, from whichever launcher started it, by one precedence rule.
#pragma once
#include <string>
#include <vector>

#include "balancenet/schedulers/EnvironmentReading.h"

namespace balancenet::schedulers {

// The launchers in the order they win when several have set their variables: the innermost launcher first.
// torchrun (or balancenet's own launcher) started inside an srun step or an mpirun gives each worker RANK, so
// RANK wins; mpirun inside a Slurm allocation sets OMPI_* over the allocation's SLURM_*; a pod's index says only
// which host it is, so it comes last.
const std::vector<std::string>& schedulerPrecedence();

// The first launcher in schedulerPrecedence() whose variables are set; nothing when none is (a plain shell: this
// process launches the job itself). Throws UsageError on a malformed or inconsistent value of the launcher it read.
std::optional<SchedulerReading> readSchedulerEnvironment(const Environment& env);

}  // namespace balancenet::schedulers

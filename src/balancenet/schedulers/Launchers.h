// Launchers: one reader per launcher whose environment balancenet understands (see SchedulerEnvironment.h for
// which wins when several are set). Each returns nothing when its launcher did not start this process.
#pragma once
#include "balancenet/schedulers/EnvironmentReading.h"

namespace balancenet::schedulers {

// torchrun's agent, `balancenet train`'s own launcher, or a user: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE.
std::optional<SchedulerReading> readTorchrun(const Environment& env);

// Open MPI's mpirun: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE.
std::optional<SchedulerReading> readOpenMpi(const Environment& env);

// MPICH's (and Intel MPI's) Hydra mpiexec: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS.
std::optional<SchedulerReading> readMpich(const Environment& env);

// A task of a Slurm job step (srun): SLURM_PROCID of SLURM_STEP_NUM_TASKS (or SLURM_NTASKS), SLURM_LOCALID, this
// node's count in SLURM_STEP_TASKS_PER_NODE; the store on the first host of SLURM_STEP_NODELIST (SLURM_JOB_NODELIST).
// A batch script itself (SLURM_PROCID without SLURM_STEP_ID) is not a task: it launches like a plain shell.
std::optional<SchedulerReading> readSlurm(const Environment& env);

// A pod of a Kubernetes Indexed Job: JOB_COMPLETION_INDEX is the node rank; the store is on pod 0,
// <job>-0.<service>, where HOSTNAME is <job>-<index> and BALANCENET_K8S_SERVICE names the Job's headless service.
std::optional<SchedulerReading> readKubernetes(const Environment& env);

}  // namespace balancenet::schedulers

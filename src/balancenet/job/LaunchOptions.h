// LaunchOptions: who runs where in a job (torchrun's conventions), who this process is in it, and the user's
// program `balancenet launch` runs. Part of JobConfig.h; launch/ and the schedulers' readers need no more.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "balancenet/core/FieldList.h"
#include "balancenet/job/HostLayout.h"

namespace balancenet::job {

// A launch setting read from the environment, and the variable (or rule) it came from: --print-config shows them.
struct SettingSource {
  std::string setting;  // "rank", "master_addr", ...
  std::string value;
  std::string from;  // "SLURM_PROCID", "first host of SLURM_STEP_NODELIST=node[01-04]"

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(setting, value, from);
};
BALANCENET_CHECK_FIELDS(SettingSource);

// torchrun's conventions: a job of nnodes machines, nprocPerNode workers on this one (hosts may differ).
struct LaunchOptions {
  int nnodes = 1;
  int nodeRank = 0;
  int nprocPerNode = 1;  // this host's workers
  // Every host's workers by node rank: from --nproc-per-node's list form, or agreed when the hosts' launchers met
  // (launch/HostMeeting.h). Empty: not known yet, every host assumed to run nprocPerNode.
  std::vector<int> hostWorkers;
  // Flags checked against nnodes x nprocPerNode while hostWorkers was not known: hosts that turn out to run
  // another world are refused at their meeting, naming these (give the list form then).
  std::vector<std::string> assumedWorldFlags;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 0;  // 0: pick a free port (single-machine runs only)
  std::chrono::milliseconds rendezvousTimeout{60000};
  std::string iface;
  std::string jobToken;  // --job-token, --job-token-file or BALANCENET_JOB_TOKEN: only its holders join the job
  bool insecureOpen =
      false;  // --insecure-open-job: a store beyond loopback may admit anyone (comm/admission/ClosedJob.h)
  bool tokenMadeUp = false;  // --job-token auto made jobToken here: printed once for the other hosts
  std::string storeFile;     // set by a single-machine launcher for its children: the job's private FileStore
  bool force = false;        // --force: start the processes even where their memory estimate exceeds what is available
  // Which launcher's environment said who this process is (schedulers/SchedulerEnvironment.h), empty: none; and
  // every setting read from the environment with its source.
  std::string scheduler;
  std::vector<SettingSource> sources;
  int worldSize() const { return hostWorkers.empty() ? nnodes * nprocPerNode : hostLayout(hostWorkers).world; }
  // This host's first rank: its workers are ranks firstRank() .. firstRank() + nprocPerNode - 1.
  int firstRank() const {
    return hostWorkers.empty() ? nodeRank * nprocPerNode : hostLayout(hostWorkers).firstRanks.at(nodeRank);
  }

  // The fields a launcher sends its workers (core/FieldList.h), all but jobToken, which a worker reads from
  // BALANCENET_JOB_TOKEN (childEnvironment sets it): a secret is not copied into a second place.
  static constexpr std::size_t kLocalFields = 1;
  BALANCENET_FIELDS(nnodes, nodeRank, nprocPerNode, hostWorkers, assumedWorldFlags, masterAddr, masterPort,
                    rendezvousTimeout, iface, insecureOpen, tokenMadeUp, storeFile, force, scheduler, sources);
};
BALANCENET_CHECK_FIELDS(LaunchOptions);

// Set when this process is one worker of a job (RANK and WORLD_SIZE in the environment).
struct WorkerIdentity {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localWorldSize = 0;  // LOCAL_WORLD_SIZE: workers on this host (torchrun, Slurm, our launcher); 0: not set
  bool storeHostedByLauncher = false;  // else rank 0 serves the store itself
  bool joining =
      false;        // joins a running elastic job (restarted by the launcher, or --join); rank = member id, -1: new
  int attempt = 0;  // > 0: the job was restarted whole (a pipeline from its checkpoint) this many times
};

// `balancenet launch`: each worker runs the user's program instead of this binary (launch/LocalLauncher.h).
struct ProgramOptions {
  std::string python;                           // --python, resolved to an absolute path; empty with --no-python
  std::vector<std::string> argv;                // {python, script, args...}, or with --no-python {program, args...}
  std::string executable;                       // the file exec'd: the python, or the program found as execvp would
  bool given() const { return !argv.empty(); }  // else the workers are this binary (train, federate)

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(python, argv, executable);
};
BALANCENET_CHECK_FIELDS(ProgramOptions);

}  // namespace balancenet::job

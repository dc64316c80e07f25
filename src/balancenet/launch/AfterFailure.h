// AfterFailure: what the launcher does when one of its processes dies, as a pure decision on what it knows of the
// job and of the death (the supervisor in LocalLauncher.cpp acts on it).
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::launch {

enum class AfterFailure {
  GoOnWithout,         // elastic (or a federated client): one line, the job goes on (and may restart the process)
  RestartTheJob,       // a pipeline: every stage stops and the job starts again from its newest checkpoint
  ServeTheStoreAlone,  // host 0 of an elastic job over several hosts, none of its workers left: the others need it
  StopTheJob,          // the rest are stopped and the cause named; exit 2 for bad input, else 1
};

// What of the job decides, from its configuration.
struct JobShape {
  bool federated = false;
  bool elastic = false;
  bool pipeline = false;
  int hosts = 1;
  int hostRank = 0;
  int minWorkers = 1;  // --min-workers
  static JobShape of(const job::JobConfig& c);
};

// What the launcher knows of the death and of the processes left.
struct Death {
  int exitCode = 0;                                               // when it exited
  int signal = 0;                                                 // > 0: it was killed by this signal
  int rank = -1;                                                  // its rank (the federated server is rank 0)
  bool badInput() const { return signal == 0 && exitCode == 2; }  // exit 2: the process refused its input
  static Death of(int waitStatus, int rank);
};

// In this order: an elastic job (or a federated client) goes on while enough workers run (a launcher of a job over
// several hosts sees only its own: the workers count the job's); a pipeline restarts while --max-restarts allows
// and the job has not finished; host 0 of an elastic multi-host job keeps serving the store when none of its own
// workers is left; bad input always stops the job.
AfterFailure afterFailure(const JobShape& job, const Death& death, int runningWorkers, int restartsLeft, bool finished);

// The launcher's exit code when the death stops the job.
int stopExitCode(const Death& cause);

}  // namespace balancenet::launch

// The supervisor's decision after a death, without processes: unit-tested case by case.
#include "balancenet/launch/AfterFailure.h"

#include <sys/wait.h>

namespace balancenet::launch {

JobShape JobShape::of(const job::JobConfig& c) {
  JobShape s;
  s.federated = c.federated.has_value();
  s.elastic = c.resilience.elastic;
  s.pipeline = c.pipeline.enabled();
  s.hosts = c.launch.nnodes;
  s.hostRank = c.launch.nodeRank;
  s.minWorkers = c.resilience.minNodes;
  return s;
}

Death Death::of(int waitStatus, int rank) {
  Death d;
  d.rank = rank;
  if (WIFSIGNALED(waitStatus))
    d.signal = WTERMSIG(waitStatus);
  else
    d.exitCode = WEXITSTATUS(waitStatus);
  return d;
}

namespace {

bool survivable(const JobShape& job, const Death& death, int runningWorkers) {
  // A federated client's death leaves it out of rounds (the server goes on); the server's ends the job.
  if (job.federated) return death.rank != 0 && !death.badInput();
  const int enough = job.hosts > 1 ? 1 : job.minWorkers;
  return job.elastic && !death.badInput() && runningWorkers >= enough;
}

// Pipeline stages cannot go on without one of theirs (validation allows --max-restarts there only with
// --checkpoint-dir, on one host).
bool restartsTheJob(const JobShape& job, const Death& death, int restartsLeft, bool finished) {
  return job.pipeline && !death.badInput() && restartsLeft > 0 && !finished;
}

// The other hosts' workers still need host 0's store, to re-form without its workers and to go on.
bool servesTheStoreAlone(const JobShape& job, const Death& death, int runningWorkers) {
  return job.elastic && job.hosts > 1 && job.hostRank == 0 && !death.badInput() && runningWorkers == 0;
}

}  // namespace

AfterFailure afterFailure(const JobShape& job, const Death& death, int runningWorkers, int restartsLeft,
                          bool finished) {
  if (survivable(job, death, runningWorkers)) return AfterFailure::GoOnWithout;
  if (restartsTheJob(job, death, restartsLeft, finished)) return AfterFailure::RestartTheJob;
  if (servesTheStoreAlone(job, death, runningWorkers)) return AfterFailure::ServeTheStoreAlone;
  return AfterFailure::StopTheJob;
}

int stopExitCode(const Death& cause) { return cause.badInput() ? 2 : 1; }

}  // namespace balancenet::launch

// The table of environment variables, and the filter a launcher applies to what its children inherit.
#include "balancenet/core/EnvironmentVariables.h"

namespace balancenet {

const std::vector<EnvironmentVariable>& environmentVariables() {
  static const std::vector<EnvironmentVariable> table = {
      {kRankVar, "this worker's rank; set: the process is a worker (torchrun's convention)", true},
      {kWorldSizeVar, "workers in the job (with RANK)", true},
      {kLocalRankVar, "this worker's index on its host", true},
      {kLocalWorldSizeVar, "workers on this host: a worker's default --threads shares the host's CPU among them", true},
      {kMasterAddrVar, "address of the job's store (host 0)", true},
      {kMasterPortVar, "port of the job's store", true},
      {kGroupRankVar, "launch: this worker's host index (--node-rank)", true},
      {kRestartCountVar, "launch: restarts of the job's workers so far (0 at first)", true},
      {kMaxRestartsVar, "launch: --max-restarts", true},
      {kRunIdVar, "launch: the job's id (its run directory's name)", true},
      {kUseAgentStoreVar, "launch: True, so torch's env:// joins the launcher's store instead of rank 0 hosting one",
       true},
      {kOmpThreadsVar, "launch: --threads, set on each worker unless the launcher's environment has it", false},
      {kGlooIfaceVar,
       "launch: --iface (or the interface that routes to the master), set on each worker of a job over several "
       "hosts unless the launcher's environment has it",
       false},
      {kJobTokenVar, "shared secret of a job over several hosts (preferred to --job-token)", true},
      {kStoreHostedVar, "internal: 1 when the launcher hosts the store", true},
      {kStoreFileVar, "internal: a single-host job's private store file", true},
      {kJoinVar, "internal: 1 on a worker the launcher restarted (it joins)", true},
      {kAttemptVar, "internal: N on the workers of a job the launcher restarted whole (a pipeline) for the Nth time",
       true},
      {kServerVar, "internal: this process is parameter server K", true},
      {kJobConfigVar,
       "internal: the job as the launcher resolved it (JSON): its workers and `import balancenet.torch` read it", true},
      {kK8sServiceVar, "a Kubernetes Indexed Job's headless service: pod 0, <job>-0.<service>, serves the store",
       false},
      {kFaultVar, "testing: RANK:STEP:kill|stop, a worker signals itself at a step", false},
      {kTmpDirVar, "where a single-host job's private store directory is made (default /tmp)", false},
      {kGlibcTunablesVar, "glibc.malloc.* tunables, or MALLOC_*_ variables: then balancenet leaves malloc as tuned",
       false},
  };
  return table;
}

std::vector<std::string> withoutIdentityVariables(const std::vector<std::string>& inherited) {
  std::vector<std::string> kept;
  for (const auto& entry : inherited) {
    const std::string name = entry.substr(0, entry.find('='));
    bool identity = false;
    for (const auto& v : environmentVariables()) identity = identity || (v.identity && name == v.name);
    if (!identity) kept.push_back(entry);
  }
  return kept;
}

}  // namespace balancenet

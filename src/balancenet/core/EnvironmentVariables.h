// EnvironmentVariables: every environment variable balancenet reads, sets on its children or filters, in one table.
#pragma once
#include <string>
#include <vector>

namespace balancenet {

// torchrun's names: who a worker is and where its job's store is.
inline constexpr const char* kRankVar = "RANK";
inline constexpr const char* kWorldSizeVar = "WORLD_SIZE";
inline constexpr const char* kLocalRankVar = "LOCAL_RANK";
inline constexpr const char* kLocalWorldSizeVar = "LOCAL_WORLD_SIZE";
inline constexpr const char* kMasterAddrVar = "MASTER_ADDR";
inline constexpr const char* kMasterPortVar = "MASTER_PORT";
// torchrun's others, set on the workers of `balancenet launch` (a user's program) only.
inline constexpr const char* kGroupRankVar = "GROUP_RANK";
inline constexpr const char* kRestartCountVar = "TORCHELASTIC_RESTART_COUNT";
inline constexpr const char* kMaxRestartsVar = "TORCHELASTIC_MAX_RESTARTS";
inline constexpr const char* kRunIdVar = "TORCHELASTIC_RUN_ID";
inline constexpr const char* kUseAgentStoreVar = "TORCHELASTIC_USE_AGENT_STORE";
inline constexpr const char* kOmpThreadsVar = "OMP_NUM_THREADS";
// torch's Gloo interface: torchrun users set it by hand on multi-host jobs.
inline constexpr const char* kGlooIfaceVar = "GLOO_SOCKET_IFNAME";
// balancenet's own.
inline constexpr const char* kJobTokenVar = "BALANCENET_JOB_TOKEN";
inline constexpr const char* kStoreHostedVar = "BALANCENET_STORE_HOSTED";
inline constexpr const char* kStoreFileVar = "BALANCENET_STORE_FILE";
inline constexpr const char* kJoinVar = "BALANCENET_JOIN";
inline constexpr const char* kAttemptVar = "BALANCENET_ATTEMPT";
inline constexpr const char* kServerVar = "BALANCENET_PS_SERVER";
inline constexpr const char* kJobConfigVar = "BALANCENET_JOB_CONFIG";
inline constexpr const char* kPythonPathVar = "PYTHONPATH";
inline constexpr const char* kK8sServiceVar = "BALANCENET_K8S_SERVICE";
inline constexpr const char* kFaultVar = "BALANCENET_FAULT";
// The system's, read only.
inline constexpr const char* kTmpDirVar = "TMPDIR";
inline constexpr const char* kGlibcTunablesVar = "GLIBC_TUNABLES";

struct EnvironmentVariable {
  const char* name;
  const char* meaning;
  // Says who a process is in a job: a launcher drops an inherited value and sets its own for each child,
  // so that a child never sees two (or its launcher's own identity).
  bool identity;
};

// All of them, in the order --help and docs/usage.md list them (the MALLOC_*_ variables of
// mallocEnvironmentVariables() are one entry).
const std::vector<EnvironmentVariable>& environmentVariables();

// "NAME=value" entries of `inherited` whose NAME is not an identity variable.
std::vector<std::string> withoutIdentityVariables(const std::vector<std::string>& inherited);

}  // namespace balancenet

// CommFlags: how gradients travel: --comm, --bucket-mb, --no-overlap, --offload-below, --explain-comm,
// --grad-compress, --compress-warmup, --no-error-feedback and --allow-lossy-comm, and the parameter servers' --ps and
// --staleness.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/cli/flags/FlagValues.h"

namespace balancenet::cli {

// The group's values as given, before validateComm converts them into config.comm.
struct CommRaw {
  int servers = kUnset, staleness = kUnset;  // --ps, --staleness
  std::string comm = "auto";
  std::string compression = "none";  // --grad-compress
  int compressWarmup = kUnset;       // --compress-warmup
  bool noOverlap = false;
  bool noErrorFeedback = false;
};

// Declares the group on `app`: --comm, --ps, --staleness and --no-overlap into `raw`, the rest into config.comm.
void addCommFlags(CLI::App& app, job::JobConfig& config, CommRaw& raw);

// --comm, --bucket-mb, --no-overlap, --offload-below into config.comm, early: the other groups are checked
// against the mode. UsageError naming the flag.
void validateComm(job::JobConfig& config, const CommRaw& raw);

// --comm ps, --ps, --staleness, after the split and the policy are settled (SSP needs a fixed split: under --policy
// equal validateAllocation made it equal) and the environment is read (a server's index). UsageError naming the flag.
void validateParameterServers(job::JobConfig& config, const CommRaw& raw);

}  // namespace balancenet::cli

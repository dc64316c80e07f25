// ResilienceFlags: surviving dead and stalled workers and joining a running job: --elastic, --min-workers,
// --max-workers, --peer-timeout, --max-restarts, --stall-timeout, --join, --store-file. Train and launch share them.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/cli/flags/FlagValues.h"
#include "balancenet/elastic/ResilienceOptions.h"

namespace balancenet::cli {

// The group's values as given, before validateResilience converts them into config.resilience.
struct ResilienceRaw {
  double stallTimeoutS = 0, peerTimeoutS = secondsOf(elastic::ResilienceOptions{}.peerTimeout);
  std::string joinStoreFile;  // --store-file, with --join
};

// Declares the group on `app`: the timeouts and --store-file into `raw`, the rest into config.resilience.
void addResilienceFlags(CLI::App& app, job::JobConfig& config, ResilienceRaw& raw);

// After the hosts (and, for train, --comm, the pipeline and --global-batch's form, which it is checked against):
// config.resilience's timeouts and limits, the store file a joiner reaches, and a joiner's worker identity.
// UsageError naming the flag.
void validateResilience(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli

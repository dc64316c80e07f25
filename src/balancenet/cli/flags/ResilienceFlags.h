// ResilienceFlags: surviving dead and stalled workers and joining a running job: --elastic, --min-workers,
// --max-workers, --peer-timeout, --max-restarts, --stall-timeout, --join, --store-file. Train and launch share them.
#pragma once

namespace CLI {
class App;
}
namespace balancenet::job {
struct JobConfig;
}

namespace balancenet::cli {

struct RawFlags;  // TrainFlags.h

// Declares the group on `app`: the timeouts and --store-file into `raw`, the rest into config.resilience.
void addResilienceFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);

// After the hosts (and, for train, --comm, the pipeline and --global-batch's form, which it is checked against):
// config.resilience's timeouts and limits, the store file a joiner reaches, and a joiner's worker identity.
// UsageError naming the flag.
void validateResilience(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli

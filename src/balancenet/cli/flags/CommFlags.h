// CommFlags: how gradients travel: --comm, --bucket-mb, --no-overlap, --offload-below, --explain-comm, and the
// parameter servers' --ps and --staleness.
#pragma once

namespace CLI {
class App;
}
namespace balancenet::job {
struct JobConfig;
}

namespace balancenet::cli {

struct RawFlags;  // TrainFlags.h

// Declares the group on `app`: --comm, --ps, --staleness and --no-overlap into `raw`, the rest into config.comm.
void addCommFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);

// --comm, --bucket-mb, --no-overlap, --offload-below into config.comm, early: the other groups are checked
// against the mode. UsageError naming the flag.
void validateComm(job::JobConfig& config, const RawFlags& raw);

// --comm ps, --ps, --staleness, after the split and the policy are settled (SSP needs a fixed split and makes
// an equal one) and the environment is read (a server's index). UsageError naming the flag.
void validateParameterServers(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli

// JobTokenFlags: how a job gets its token (--job-token TOKEN|auto, --job-token-file, BALANCENET_JOB_TOKEN) or
// runs open (--insecure-open-job), for train, federate and launch alike.
#pragma once
#include <string>

#include "balancenet/job/JobConfig.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

inline constexpr const char* kAutoJobToken = "auto";  // --job-token auto: the store's host makes one up

// Declares --job-token (into config.launch.jobToken), --job-token-file (into `tokenFile`) and
// --insecure-open-job (config.launch.insecureOpen); the three exclude each other.
void addJobTokenFlags(CLI::App& app, job::JobConfig& config, std::string& tokenFile);

// After the flags, the environment (BALANCENET_JOB_TOKEN, RANK, ...) and --join are read: config.launch.jobToken
// becomes the job's token: `tokenFile`'s, --job-token's, or the environment's; `auto` takes the environment's
// when it has one (a launcher's workers, a host told the token), else is made up where this process serves the
// store (config.launch.tokenMadeUp), else is a UsageError. Then a process that will serve or reach a TCP store
// beyond loopback without a token is refused (comm/admission/ClosedJob.h), before it opens anything.
void settleJobToken(job::JobConfig& config, const std::string& tokenFile);

// Prints a made-up token once, on stderr, with the lines that give it to the other hosts; nothing otherwise.
void announceJobToken(const job::JobConfig& config);

}  // namespace balancenet::cli

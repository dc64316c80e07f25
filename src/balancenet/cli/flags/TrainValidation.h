// TrainValidation: `balancenet train`'s flags validated as a whole: each group's checks (<Group>Flags.h) in the
// order their dependencies need, and the checks that span groups.
#pragma once
#include "balancenet/cli/flags/FlagGroup.h"

namespace balancenet::cli {

// After parsing: checks the flags' values and combinations against each other and against the
// environment already read into config.worker / config.server, and fills in what follows from them.
// Throws UsageError with a one-line message naming the flag.
void validateTrainFlags(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli

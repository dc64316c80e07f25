// ModelFlags: which model trains and on what: --model, --width, --dropout, --sync-bn, the gpt shape (--layers,
// --heads, --embed) and the data's flags (DataFlags.h). Train and federate share them.
#pragma once
#include "balancenet/cli/flags/FlagGroup.h"

namespace balancenet::cli {

// Declares the group on `app`, into config.model, config.syncBatchNorm and the data's options.
void addModelFlags(CLI::App& app, job::JobConfig& config);

// --model (a zoo name or a TorchScript file), --width, --dropout, and --sync-bn against the model: UsageError
// naming the flag. (A TorchScript file itself is checked before launch, LaunchChecks.h.)
void validateModel(const job::JobConfig& config);

}  // namespace balancenet::cli

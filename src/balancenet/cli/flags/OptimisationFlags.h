// OptimisationFlags: the optimiser and the learning-rate schedule: --optimizer, --lr, --momentum,
// --weight-decay, --nesterov, --clip-grad-norm, --accumulate, --warmup-steps, --lr-decay and its parameters.
#pragma once

namespace CLI {
class App;
}
namespace balancenet::job {
struct JobConfig;
}

namespace balancenet::cli {

struct RawFlags;  // TrainFlags.h

// Declares the group on `app`: --lr-decay into `raw`, the rest into config.trainer.
void addOptimisationFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);

// Each value checked (UsageError naming the flag), the decay parsed, the schedule's length set from --steps.
void validateOptimisation(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli

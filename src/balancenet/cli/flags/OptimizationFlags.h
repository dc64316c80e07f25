// OptimizationFlags: the optimiser and the learning-rate schedule: --optimizer, --lr, --momentum,
// --weight-decay, --nesterov, --clip-grad-norm, --accumulate, --precision, --warmup-steps, --lr-decay and its
// parameters.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"

namespace balancenet::cli {

// The group's values as given, before validateOptimization converts them into config.trainer.
struct OptimizationRaw {
  std::string lrDecay = "constant";
  std::string precision = "fp32";
  std::string accumulate = "1";  // K or auto
  std::string recompute = "none";
};

// Declares the group on `app`: --lr-decay, --precision, --accumulate and --recompute into `raw`, the rest into
// config.trainer.
void addOptimizationFlags(CLI::App& app, job::JobConfig& config, OptimizationRaw& raw);

// Each value checked (UsageError naming the flag), the decay parsed, the schedule's length set from --steps.
void validateOptimization(job::JobConfig& config, const OptimizationRaw& raw);

}  // namespace balancenet::cli

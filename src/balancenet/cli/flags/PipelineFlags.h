// PipelineFlags: pipeline parallelism: --pipeline-stages, --micro-batches, --schedule, --partition,
// --explain-partition, --keep-partition and the memory caps (--memory-limit-mb) placements are checked against.
#pragma once
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/cli/flags/FlagValues.h"

namespace balancenet::cli {

// The group's values as given, before validatePipeline converts them into config.pipeline and
// config.memoryLimitMb.
struct PipelineRaw {
  int microBatches = kUnset;         // --micro-batches: unset is 4 x --pipeline-stages
  std::string pipelineStages = "1";  // --pipeline-stages: a number or auto (kAutoStages)
  std::string memoryLimitMb = "0";   // --memory-limit-mb: one cap or one per worker
};

// Declares the group on `app`: --pipeline-stages, --micro-batches and --memory-limit-mb into `raw`, the rest
// into config.pipeline.
void addPipelineFlags(CLI::App& app, job::JobConfig& config, PipelineRaw& raw);

// After the hosts and --comm, before the allocation (which splits the global batch over the pipelines): the
// memory caps and config.pipeline for `world` workers, and the flags pipelines do not work with yet refused.
// UsageError naming the flag.
void validatePipeline(job::JobConfig& config, const RawFlags& raw, int world);

// --pipeline-stages' value: a number of stages (at least 1) or "auto" (kAutoStages); else a UsageError.
int parsePipelineStages(const std::string& text);

}  // namespace balancenet::cli

// PipelineFlags: pipeline parallelism: --pipeline-stages, --micro-batches, --schedule, --partition,
// --explain-partition, --keep-partition and the memory caps (--memory-limit-mb) placements are checked against.
#pragma once
#include <string>

namespace CLI {
class App;
}
namespace balancenet::job {
struct JobConfig;
}

namespace balancenet::cli {

struct RawFlags;  // TrainFlags.h

// Declares the group on `app`: --pipeline-stages, --micro-batches and --memory-limit-mb into `raw`, the rest
// into config.pipeline.
void addPipelineFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);

// After the hosts and --comm, before the allocation (which splits the global batch over the pipelines): the
// memory caps and config.pipeline for `world` workers, and the flags pipelines do not work with yet refused.
// UsageError naming the flag.
void validatePipeline(job::JobConfig& config, const RawFlags& raw, int world);

// --pipeline-stages' value: a number of stages (at least 1) or "auto" (kAutoStages); else a UsageError.
int parsePipelineStages(const std::string& text);

}  // namespace balancenet::cli

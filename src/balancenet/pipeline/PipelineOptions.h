// PipelineOptions: pipeline parallelism (see docs/pipeline.md): the model cut into stages, micro-batches through
// them. Part of job/JobConfig.h.
#pragma once
#include <string>
#include "balancenet/core/FieldList.h"

namespace balancenet::pipeline {

// --micro-batches' default per stage: enough micro-batches that the bubble, (S-1)/(M+S-1), stays below 20%.
constexpr int kDefaultMicroBatchesPerStage = 4;
// --pipeline-stages auto: the launcher plans the shape (planner/Planner.h) before workers start.
constexpr int kAutoStages = 0;

struct PipelineOptions {
  int stages = 1;                 // --pipeline-stages: 1 is data parallelism; the world a multiple of it
  int microBatches = 0;           // --micro-batches M; validation fills in the default, 4 x stages
  std::string schedule = "1f1b";  // --schedule gpipe|1f1b
  // --partition uniform (equal block counts) | flops (equal FLOPs, PipeDream-style) | auto (planned from
  // each node's measured block costs, and moved live) | "0-9,10-17"
  std::string partition = "uniform";
  bool explainPartition = false;  // --explain-partition: rank 0 prints the cost table and the plan
  bool keepPartition = false;     // --keep-partition: auto plans once and never moves the boundaries
  bool enabled() const { return stages > 1; }
  bool planned() const { return partition == "auto"; }

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(stages, microBatches, schedule, partition, explainPartition, keepPartition);
};
BALANCENET_CHECK_FIELDS(PipelineOptions);

}  // namespace balancenet::pipeline

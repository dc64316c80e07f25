// PipelineEvaluator: test accuracy through the stages, every column evaluating one shard of the test set.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/data/Dataset.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/models/Blocks.h"
#include "balancenet/objective/Objective.h"
#include "balancenet/pipeline/PipelineGroups.h"

namespace balancenet::pipeline {

// Collective over the world. Column j takes the j-th contiguous shard; its first stage reads the images
// and its last stage counts; totals are all-reduced, so every rank returns the same point.
// `inputShape`: one sample's activation entering this stage (unused at the first stage).
metrics::EvalPoint evaluatePipeline(models::BlockRange& stage, PipelineGroups& groups,
                                    const std::vector<int64_t>& inputShape, const data::Dataset& test,
                                    const objective::Objective& objective, int64_t step, int64_t chunk = 500);

}  // namespace balancenet::pipeline

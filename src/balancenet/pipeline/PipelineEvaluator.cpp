// Evaluation through the pipeline: forward only, chunk by chunk down each column.
#include "balancenet/pipeline/PipelineEvaluator.h"

#include <ATen/ATen.h>

#include "balancenet/trainer/Evaluator.h"

namespace balancenet::pipeline {
namespace {

// Above every training tag (ScheduleRunner::tagFor stays below 2^27).
constexpr int kEvalTagBase = 1 << 28;

}  // namespace

metrics::EvalPoint evaluatePipeline(models::BlockRange& stage, PipelineGroups& groups,
                                    const std::vector<int64_t>& inputShape, const data::Dataset& test,
                                    const objective::Objective& objective, int64_t step, int64_t chunk) {
  const int64_t n = test.size(), columns = groups.topology.replicas, j = groups.replica();
  const int64_t begin = n * j / columns, end = n * (j + 1) / columns;
  const bool wasTraining = stage.is_training();
  stage.eval();
  trainer::EvalTotals totals;  // counted by the last stage only
  {
    at::NoGradGuard noGrad;
    int tag = kEvalTagBase;
    for (int64_t b = begin; b < end; b += chunk, ++tag) {
      const int64_t len = std::min(chunk, end - b);
      at::Tensor x;
      // Only the ends read samples: the first stage its inputs, the last its targets.
      const data::Batch batch =
          groups.firstStage() || groups.lastStage() ? test.batch(data::indexRange(b, b + len)) : data::Batch{};
      if (groups.firstStage()) {
        x = batch.inputs;
      } else {
        std::vector<int64_t> shape{len};
        shape.insert(shape.end(), inputShape.begin(), inputShape.end());
        x = at::empty(shape, at::kFloat);
        groups.world.recv(x, groups.previousRank(), tag);
      }
      auto y = stage.forward(x).contiguous();
      if (!groups.lastStage()) {
        groups.world.send(y, groups.nextRank(), tag);
        continue;
      }
      totals.add(objective, y, batch.targets);
    }
  }
  stage.train(wasTraining);
  return totals.point(groups.world, step);
}

}  // namespace balancenet::pipeline

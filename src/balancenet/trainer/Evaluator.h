// Evaluator: test loss and accuracy with every rank evaluating one shard of the test set.
#pragma once
#include "balancenet/comm/group/Collectives.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/models/Network.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::trainer {

// Test samples per forward pass. Small enough that a CNN's activations stay under glibc's 32 MB mmap threshold
// (core/MemoryReuse), so each batch reuses the last one's memory: at 1000 every batch mapped and faulted in fresh
// pages, and evaluating Fashion-MNIST's 10,000 test images on 2 CPU workers took 8 s instead of 3.4 s.
constexpr int64_t kEvalBatch = 128;

// What the ranks count of a test set: each adds its logits, then point() sums over the group. The data-
// parallel and the pipeline evaluator both count through it.
class EvalTotals {
 public:
  void add(const objective::Objective& objective, const at::Tensor& outputs, const at::Tensor& targets);
  // Collective over `comm`: every rank returns the same point (accuracy and mean loss over all counted).
  metrics::EvalPoint point(comm::Collectives& comm, int64_t step) const;
  // What this process alone counted (no collective): one process that evaluates the whole set.
  metrics::EvalPoint localPoint(int64_t step) const;

 private:
  double correct_ = 0, lossSum_ = 0, counted_ = 0;
};

// Counts test samples [begin, end) in batches: the model in eval mode without gradients, its mode restored.
EvalTotals countTestSamples(models::Network& net, const data::Dataset& test, const objective::Objective& objective,
                            int64_t begin, int64_t end, int64_t batchSize = kEvalBatch);

// Rank r evaluates the r-th contiguous shard; correct counts and loss sums are all-reduced, so the
// result covers the whole test set exactly once and is identical on every rank.
metrics::EvalPoint evaluate(models::Network& net, const data::Dataset& test, const objective::Objective& objective,
                            comm::Collectives& comm, int64_t step, int64_t batchSize = kEvalBatch);

}  // namespace balancenet::trainer

// TrainerOptions: a training run's options, shared by the run loop (steps, evaluation, progress, outputs)
// and the engines (batch, seed, learning rate, optimiser).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/core/FieldList.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/memory/PassFit.h"
#include "balancenet/metrics/Efficiency.h"
#include "balancenet/metrics/MetricStyle.h"
#include "balancenet/precision/Precision.h"
#include "balancenet/recompute/RecomputeMode.h"
#include "balancenet/trainer/LrSchedule.h"
#include "balancenet/trainer/OptimizerFactory.h"

namespace balancenet::trainer {

// --global-batch's default: the B the default learning rate is set for.
inline constexpr int64_t kDefaultGlobalBatch = 128;
// --accumulate auto: each step, as many micro-steps as this worker's share needs to fit its memory.
inline constexpr int64_t kAccumulateAuto = 0;

struct TrainerOptions {
  int64_t steps = 1000;
  int64_t globalBatch = kDefaultGlobalBatch;
  uint64_t seed = 1;  // data order; the model's initial weights come from rank 0
  LrSchedule lr;
  OptimizerOptions optimizer;
  double clipGradNorm = 0;  // > 0: the synchronised gradient scaled down to this global L2 norm
  int64_t accumulate = 1;   // micro-steps per worker share, gradients accumulated; kAccumulateAuto: from samplesPerPass
  // With kAccumulateAuto: the most samples one pass of this worker holds (memory/PassFit, set by the worker).
  int64_t samplesPerPass = memory::kUnlimited;
  bool shardState = false;  // --shard-state: each worker keeps the optimiser state of its slice only
  // With shardState: every worker's slice of the flattened parameters (memory/StateSlices, set by the worker).
  std::vector<int64_t> stateSlices;
  recompute::RecomputeMode recompute = recompute::RecomputeMode::None;  // --recompute: the job's choice
  bool recomputeBlocks = false;  // this worker's answer to it (worker/WorkerMemory: auto decides per worker)
  precision::Precision precision = precision::Precision::Fp32;  // of the forward pass (autocast); weights stay fp32
  int64_t evalEvery = 0;                                        // 0: evaluate only at the end
  bool evalAtEnd = true;
  bool evalAtStart = false;                 // --eval-at-start: also before the first step
  int64_t evalSamples = data::kAllSamples;  // --eval-samples: a seeded subset of the test set; 0: none
  double stopAtAccuracy = 0;          // > 0: the run ends at the first evaluation reaching it (needs evalEvery > 0)
  double timeBudgetS = 0;             // > 0: the run ends when rank 0's training time reaches it (StopRule)
  double progressSeconds = 5;         // rank 0 prints a progress line this often; 0: never
  std::string runDir;                 // where steps.csv and summary.json go; empty: nowhere
  std::string modelName;              // for the summary
  std::string timelinePath;           // rank 0 writes every rank's Chrome trace here; empty: no timeline
  bool broadcastInitialModel = true;  // false: a joining worker, whose state arrives by restoreState
  metrics::WorkerCapacity capacity;   // this worker's sgemm peak, for the achieved fraction of it; zero: not reported
  metrics::MetricStyle metricStyle;   // samples/s or tokens/s; accuracy, perplexity or mse (Objective::metricStyle)

  // The fields a launcher sends its workers (core/FieldList.h), all but capacity, metricStyle, samplesPerPass,
  // stateSlices and recomputeBlocks, which each worker measures and derives from its data and memory
  // (worker/Worker.cpp).
  static constexpr std::size_t kLocalFields = 5;
  BALANCENET_FIELDS(steps, globalBatch, seed, lr, optimizer, clipGradNorm, accumulate, shardState, recompute, precision,
                    evalEvery, evalAtEnd, evalAtStart, evalSamples, stopAtAccuracy, timeBudgetS, progressSeconds,
                    runDir, modelName, timelinePath, broadcastInitialModel);
};
BALANCENET_CHECK_FIELDS(TrainerOptions);
}  // namespace balancenet::trainer

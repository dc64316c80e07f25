// SmallRuns: the short SGD run that multi-rank equivalence tests train (models: comparisonModel).
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/trainer/Trainer.h"

namespace balancenet::testing {

// SGD with momentum and weight decay, no evaluation, no progress lines.
trainer::TrainerOptions sgdRun(int64_t steps, int64_t globalBatch, uint64_t seed);

}  // namespace balancenet::testing

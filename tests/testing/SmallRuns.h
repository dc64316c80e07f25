// SmallRuns: the small deterministic model and SGD run that multi-rank equivalence tests train.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/trainer/Trainer.h"

namespace balancenet::testing {

// The zoo model at width 0.25 without dropout (dropout masks are per-process random).
models::ModelOptions smallModel(const std::string& name);

// SGD with momentum and weight decay, no evaluation, no progress lines.
trainer::TrainerOptions sgdRun(int64_t steps, int64_t globalBatch, uint64_t seed);

}  // namespace balancenet::testing

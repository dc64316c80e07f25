// ReferenceTraining: the golden single-process loop (plain libtorch) the distributed runs must match.
#pragma once
#include <string>
#include <vector>

#include "balancenet/data/Dataset.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/trainer/Trainer.h"

namespace balancenet::testing {

// Trains a fresh model (seeded with options.seed, as a rank 0 would build it) for options.steps steps
// on whole global batches taken from the same global-permutation stream, with a mean loss: no
// communicator, no split. Returns the parameters, then the buffers. The samples are the dataset's
// training draws (augmented where it augments) and the loss the objective of its targets.
std::vector<at::Tensor> referenceTraining(const models::ModelOptions& model, const trainer::TrainerOptions& options,
                                          const data::Dataset& train, const objective::ObjectiveOptions& loss = {});
// The same loop on a network the caller built (e.g. a gpt whose head was untied first).
std::vector<at::Tensor> referenceTraining(models::Network& net, const trainer::TrainerOptions& options,
                                          const data::Dataset& train, const objective::ObjectiveOptions& loss = {});

// The same loop with each global batch's samples in reverse order: the same training up to float summation order,
// so its distance from referenceTraining is the spread of the reference itself, the floor of a comparison where
// rounding decides a discrete choice (testing/FloatBound.h).
std::vector<at::Tensor> reorderedReferenceTraining(const models::ModelOptions& model,
                                                   const trainer::TrainerOptions& options, const data::Dataset& train,
                                                   const objective::ObjectiveOptions& loss = {});
// The same on a network the caller built (e.g. one on a GPU).
std::vector<at::Tensor> reorderedReferenceTraining(models::Network& net, const trainer::TrainerOptions& options,
                                                   const data::Dataset& train,
                                                   const objective::ObjectiveOptions& loss = {});

// The options golden comparisons train under: warm-up then cosine decay, momentum 0.9, no evaluation,
// no output; a learning rate that suits the optimiser.
trainer::TrainerOptions comparisonOptions(const std::string& optimizer, int64_t steps, int64_t globalBatch,
                                          double weightDecay);
// comparisonModel(name) built from `seed` as the reference builds it, safe to call from many thread ranks at
// once: the global generator is seeded and drawn from under one lock.
models::BuiltModel seededComparisonModel(const std::string& name, uint64_t seed);
// Any model built from `seed` under the same lock.
models::BuiltModel seededModel(const models::ModelOptions& model, uint64_t seed);
// A small model without dropout: dropout masks are per-process random and would break exactness.
models::ModelOptions comparisonModel(const std::string& name);

// max |a - b| over all elements of two tensor lists of the same shapes.
double maxAbsDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b);

}  // namespace balancenet::testing

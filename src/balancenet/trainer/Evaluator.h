// Evaluator: test accuracy with every rank evaluating one shard of the test set.
#pragma once
#include "balancenet/comm/Communicator.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/models/Network.h"

namespace balancenet::trainer {

// Rank r evaluates the r-th contiguous shard; correct counts and loss sums are all-reduced, so the
// result covers the whole test set exactly once and is identical on every rank.
metrics::EvalPoint evaluate(models::Network& net, const data::MnistDataset& test, comm::Communicator& comm,
                            int64_t step, int64_t batchSize = 1000);

}  // namespace balancenet::trainer

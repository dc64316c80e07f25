// WorkerSetup: what every kind of worker (data-parallel, pipeline) builds the same way.
#pragma once
#include <memory>
#include <vector>

#include <c10/core/Device.h>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::worker {

struct TrainingData {
  std::shared_ptr<const data::Dataset> train, test;
  objective::Objective objective;  // the loss and metrics the targets call for
};

// The training and held-out sets of --data (of the held-out set, what --eval-samples evaluates; rank 0 says so),
// and the objective of their targets.
TrainingData loadTrainingData(const job::JobConfig& c);

// The model every rank builds from the same seed, sized for the data's samples and targets. `announce`:
// the first launched worker says what it built.
models::BuiltModel buildWorkerModel(const job::JobConfig& c, const data::DatasetSpec& spec, bool announce);

// Rank 0 writes what was asked for: the state_dict export, the raw parameters, the final accuracy.
void writeModelOutputs(const job::JobConfig& c, models::Network& net, const std::vector<at::Tensor>& parameters,
                       int rank, const metrics::RunSummary& summary, const metrics::MetricStyle& style);

}  // namespace balancenet::worker

// WorkerSetup: what every kind of worker (data-parallel, pipeline) builds the same way.
#pragma once
#include <memory>
#include <vector>

#include "balancenet/comm/Communicator.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/orchestrator/Orchestrator.h"

namespace balancenet::worker {

struct TrainingData {
  data::MnistDataset train, test;
};

// The training and test sets of --data, checked against the models' image size.
TrainingData loadTrainingData(const job::JobConfig& c);

// The model every rank builds from the same seed. `announce`: the first launched worker says what it built.
models::BuiltModel buildWorkerModel(const job::JobConfig& c, bool announce);

// The policy's orchestrator over `comm` (the split is over its ranks), or a fixed split where the
// orchestrator's periodic gather cannot be afforded (SSP).
std::unique_ptr<orchestrator::Allocator> makeAllocator(const job::JobConfig& c, comm::Communicator& comm,
                                                       const models::ModelInfo& model,
                                                       orchestrator::NodeSampler sampler,
                                                       orchestrator::OrchestratorOptions options);

// Rank 0 writes what was asked for: the state_dict export, the raw parameters, the final accuracy.
void writeModelOutputs(const job::JobConfig& c, models::Network& net, const std::vector<at::Tensor>& parameters,
                       int rank, const metrics::RunSummary& summary);

}  // namespace balancenet::worker

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
#include "balancenet/monitor/NodeMonitor.h"
#include "balancenet/objective/Objective.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/orchestrator/Orchestrator.h"

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

// A worker's node monitor: link probes on their own side group and thread (training never waits for them), over
// the pairs --probe-peers selects; memory alone for a job of one. The C++ worker and the Python session share it,
// so a launched script probes what `balancenet train` does.
std::unique_ptr<monitor::NodeMonitor> makeNodeMonitor(const job::JobConfig& c, comm::Communicator& comm,
                                                      const comm::RendezvousOptions& rv);

// What the orchestrator reads of the node between its steps: the monitor thread's latest figures, and the
// GEMM rate measured at start (a speed prior before any step is timed). A GPU worker's memory is its GPU's (free,
// total, the caching allocator's peak), which is what caps its share unless `shareCap` says otherwise
// (NodeSample::shareCap: --memory-limit-mb's passes, or none under --accumulate auto). `monitor` must outlive the
// sampler.
orchestrator::NodeSampler monitorSampler(const monitor::NodeMonitor& monitor, double gemmFlops, c10::Device device,
                                         int64_t shareCap = 0);

// The chooser of B for --global-batch auto or a schedule; null for a fixed B.
std::unique_ptr<orchestrator::BatchSizer> makeBatchSizer(const job::JobConfig& c);

// The policy's orchestrator over `comm` (the split is over its ranks), or a fixed split where the
// orchestrator's periodic gather cannot be afforded (SSP).
std::unique_ptr<orchestrator::Allocator> makeAllocator(const job::JobConfig& c, comm::Communicator& comm,
                                                       const models::ModelInfo& model,
                                                       orchestrator::NodeSampler sampler,
                                                       orchestrator::OrchestratorOptions options);

// Rank 0 writes what was asked for: the state_dict export, the raw parameters, the final accuracy.
void writeModelOutputs(const job::JobConfig& c, models::Network& net, const std::vector<at::Tensor>& parameters,
                       int rank, const metrics::RunSummary& summary, const metrics::MetricStyle& style);

}  // namespace balancenet::worker

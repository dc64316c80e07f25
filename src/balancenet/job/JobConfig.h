// JobConfig: everything a run needs, parsed and validated once (flags, environment), then passed down.
// In job/, below launch/ and worker/: the command fills it, and the launcher and every process read it, with no cycle.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/adaptive/BatchSizing.h"
#include "balancenet/checkpoint/CheckpointOptions.h"
#include "balancenet/comm/CommOptions.h"
#include "balancenet/core/FieldList.h"
#include "balancenet/core/Split.h"
#include "balancenet/data/DataOptions.h"
#include "balancenet/device/DeviceOptions.h"
#include "balancenet/elastic/ResilienceOptions.h"
#include "balancenet/emulation/EmulationOptions.h"
#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/job/LaunchOptions.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/objective/ObjectiveOptions.h"
#include "balancenet/pipeline/PipelineOptions.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::job {

// Each module's options live in that module (a module takes its own without the rest); job's names for them.
using checkpoint::CheckpointOptions;
using comm::CommOptions;
using device::DeviceOptions;
using elastic::ResilienceOptions;
using emulation::EmulationOptions;
using pipeline::kAutoStages;
using pipeline::kDefaultMicroBatchesPerStage;
using pipeline::PipelineOptions;

// How the batch is allocated: the policy (orchestrator/) and the global batch's sizing (adaptive/). Here since
// adaptive comes after orchestrator in the module order.
struct OrchestrationOptions {
  std::string policy = "balanced";  // see orchestrator/policies/PolicyRegistry.h
  int rebalanceEvery = 5;
  bool bnoNormalize = false;
  int probePeers = 0;          // --probe-peers: each worker probes the latency to k peers, not to all (0: all pairs)
  double rebalanceBudget = 0;  // --rebalance-budget: widen the period while a rebalance costs more (0: fixed)
  adaptive::BatchSizing batchSizing;  // --global-batch auto or a schedule, --lr-scaling; fixed: B never changes

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(policy, rebalanceEvery, bnoNormalize, probePeers, rebalanceBudget, batchSizing);
};
BALANCENET_CHECK_FIELDS(OrchestrationOptions);

struct JobConfig {
  LaunchOptions launch;
  ProgramOptions program;
  std::optional<WorkerIdentity> worker;
  std::optional<int> server;  // set when this process is parameter server k (started by the launcher)
  models::ModelOptions model;
  data::DataOptions data;
  objective::ObjectiveOptions objective;
  bool syncBatchNorm = false;
  // The initial allocation: one share per worker in data parallelism; with --pipeline-stages S > 1, one per
  // pipeline (column, see pipeline/Topology.h), worldSize / S long, every stage of column j processing share j.
  Split split;
  OrchestrationOptions orchestration;
  EmulationOptions emulation;
  CommOptions comm;
  ResilienceOptions resilience;
  trainer::TrainerOptions trainer;
  DeviceOptions device;       // --device, --devices, --backend
  int threads = 1;            // intra-op threads per worker
  bool threadsGiven = false;  // --threads was given; else each worker takes its share of its host's cores
  std::string threadsFrom;    // how a worker's default threads were chosen (WorkerThreads.h); empty: --threads
  std::string logLevel = "info";
  std::string saveParams;  // rank 0 writes the final parameters here (torch::save format)
  std::string exportPath;  // rank 0 writes the final state_dict here (Python's torch.load reads it)
  CheckpointOptions checkpoint;
  PipelineOptions pipeline;
  // --memory-limit-mb: each worker's emulated memory cap on placements, by rank (one value given: every worker
  // has it); empty or 0: none.
  std::vector<double> memoryLimitMb;
  double memoryLimitMbOf(int rank) const { return memoryLimitMb.empty() ? 0 : memoryLimitMb.at(rank); }
  bool memoryLimited() const {  // some worker has a cap
    for (double mb : memoryLimitMb)
      if (mb > 0) return true;
    return false;
  }
  // As given: the launcher's own words (a re-resolve after the hosts met, --pipeline-stages auto); for
  // `balancenet launch`, its flag words only. Workers get the resolved JobConfig instead (JobConfigJson.h).
  std::vector<std::string> argv;
  // Set by `balancenet federate`: rank 0 is the federated server, ranks 1..N its clients 0..N-1; a client's
  // death does not end the job (see docs/federated.md).
  std::optional<federated::FederatedOptions> federated;

  // The fields a launcher sends its workers (core/FieldList.h), all but worker and server, who this process is, which
  // each reads from its environment.
  static constexpr std::size_t kLocalFields = 2;
  BALANCENET_FIELDS(launch, program, model, data, objective, syncBatchNorm, split, orchestration, emulation, comm,
                    resilience, trainer, device, threads, threadsGiven, threadsFrom, logLevel, saveParams, exportPath,
                    checkpoint, pipeline, memoryLimitMb, argv, federated);
};
BALANCENET_CHECK_FIELDS(JobConfig);

}  // namespace balancenet::job

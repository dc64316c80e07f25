// JobConfig: everything a run needs, parsed and validated once (flags, environment), then passed down.
// In job/, below launch/ and worker/: the command fills it, and the launcher and every process read it, with no cycle.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/adaptive/BatchSizing.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/comm/OffloadPlan.h"
#include "balancenet/core/Split.h"
#include "balancenet/data/DataOptions.h"
#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/job/HostLayout.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/objective/ObjectiveOptions.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::job {

// A launch setting read from the environment, and the variable (or rule) it came from: --print-config shows them.
struct SettingSource {
  std::string setting;  // "rank", "master_addr", ...
  std::string value;
  std::string from;  // "SLURM_PROCID", "first host of SLURM_STEP_NODELIST=node[01-04]"
};

// torchrun's conventions: a job of nnodes machines, nprocPerNode workers on this one (hosts may differ).
struct LaunchOptions {
  int nnodes = 1;
  int nodeRank = 0;
  int nprocPerNode = 1;  // this host's workers
  // Every host's workers by node rank: from --nproc-per-node's list form, or agreed when the hosts' launchers met
  // (launch/HostMeeting.h). Empty: not known yet, every host assumed to run nprocPerNode.
  std::vector<int> hostWorkers;
  // Flags checked against nnodes x nprocPerNode while hostWorkers was not known: hosts that turn out to run
  // another world are refused at their meeting, naming these (give the list form then).
  std::vector<std::string> assumedWorldFlags;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 0;  // 0: pick a free port (single-machine runs only)
  std::chrono::milliseconds rendezvousTimeout{60000};
  std::string iface;
  std::string jobToken;  // --job-token, --job-token-file or BALANCENET_JOB_TOKEN: only its holders join the job
  bool insecureOpen =
      false;  // --insecure-open-job: a store beyond loopback may admit anyone (comm/admission/ClosedJob.h)
  bool tokenMadeUp = false;  // --job-token auto made jobToken here: printed once for the other hosts
  std::string storeFile;     // set by a single-machine launcher for its children: the job's private FileStore
  bool force = false;        // --force: start the processes even where their memory estimate exceeds what is available
  // Which launcher's environment said who this process is (schedulers/SchedulerEnvironment.h), empty: none; and
  // every setting read from the environment with its source.
  std::string scheduler;
  std::vector<SettingSource> sources;
  int worldSize() const { return hostWorkers.empty() ? nnodes * nprocPerNode : hostLayout(hostWorkers).world; }
  // This host's first rank: its workers are ranks firstRank() .. firstRank() + nprocPerNode - 1.
  int firstRank() const {
    return hostWorkers.empty() ? nodeRank * nprocPerNode : hostLayout(hostWorkers).firstRanks.at(nodeRank);
  }
};

// Set when this process is one worker of a job (RANK and WORLD_SIZE in the environment).
struct WorkerIdentity {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localWorldSize = 0;  // LOCAL_WORLD_SIZE: workers on this host (torchrun, Slurm, our launcher); 0: not set
  bool storeHostedByLauncher = false;  // else rank 0 serves the store itself
  bool joining =
      false;        // joins a running elastic job (restarted by the launcher, or --join); rank = member id, -1: new
  int attempt = 0;  // > 0: the job was restarted whole (a pipeline from its checkpoint) this many times
};

// Heterogeneity emulation: applied by wrappers around the gradient sync; no policy reads it.
struct EmulationOptions {
  emulation::FactorSchedule slowdown;    // --slowdown (+ --slowdown-schedule): relative factors
  emulation::FactorSchedule nodeSpeed;   // --node-speed (+ --speed-schedule): paces in samples/s
  std::vector<double> netDelayMs;        // --net-delay-ms: per node latency of every message
  std::vector<double> netBandwidthMbps;  // --net-bandwidth-mbps: per node link speed (megabit/s)
};

// How gradients travel (see comm/GradientSync.h for the strategies).
struct CommOptions {
  comm::CommMode mode = comm::CommMode::Auto;  // --comm (see comm/CommMode.h)
  int servers = 0;                             // --ps K: parameter server processes beside the workers (mode ps)
  int staleness = 0;                           // --staleness: 0 BSP, s > 0 SSP (mode ps)
  double bucketMb = 25;
  bool overlap = true;  // --no-overlap turns it off
  // --offload-below: with the all-reducing modes, a rank whose share is below this fraction of the largest
  // hands its gradient to a ring peer (comm/OffloadSync.h); 0: never.
  double offloadBelow = comm::kDefaultOffloadBelow;
  bool explain = false;  // --explain-comm: rank 0 prints how each layer is synchronised
};

// Surviving what shared clusters do (see docs/reliability.md).
struct ResilienceOptions {
  bool elastic = false;                          // --elastic: a dead worker is dropped and training goes on
  int minNodes = 1;                              // --min-nodes: fewer survivors stop the job
  int maxNodes = 0;                              // --max-nodes: joiners beyond it wait (0: the launched world)
  std::chrono::milliseconds peerTimeout{30000};  // --peer-timeout: a collective's wait under --elastic
  std::chrono::milliseconds stallTimeout{0};     // --stall-timeout: a collective's wait otherwise (0: rendezvous)
  int maxRestarts = 0;  // --max-restarts: the launcher starts a dead worker again (it rejoins), this often
  bool join = false;    // --join: this process joins a running elastic job as a new worker
};

struct OrchestrationOptions {
  std::string policy = "balanced";  // see orchestrator/policies/PolicyRegistry.h
  int rebalanceEvery = 5;
  bool bnoNormalize = false;
  int probePeers = 0;          // --probe-peers: each worker probes the latency to k peers, not to all (0: all pairs)
  double rebalanceBudget = 0;  // --rebalance-budget: widen the period while a rebalance costs more (0: fixed)
  adaptive::BatchSizing batchSizing;  // --global-batch auto or a schedule, --lr-scaling; fixed: B never changes
};

// --checkpoint-dir and friends (see docs/reliability.md): empty dir, no checkpoints.
struct CheckpointOptions {
  std::string dir;
  int64_t every = 100;  // steps between checkpoints; one is also written after the last step
  int keep = 3;         // newest checkpoints kept
  bool resume = false;  // continue from the newest intact checkpoint in dir
};

// Pipeline parallelism (see docs/pipeline.md): the model cut into stages, micro-batches through them.
// --micro-batches' default per stage: enough micro-batches that the bubble, (S-1)/(M+S-1), stays below 20%.
constexpr int kDefaultMicroBatchesPerStage = 4;
// --pipeline-stages auto: the launcher plans the shape (pipeline/planner/Planner.h) before workers start.
constexpr int kAutoStages = 0;
struct PipelineOptions {
  int stages = 1;                 // --pipeline-stages: 1 is data parallelism; the world a multiple of it
  int microBatches = 0;           // --micro-batches M; validation fills in the default, 4 x stages
  std::string schedule = "1f1b";  // --schedule gpipe|1f1b
  // --partition uniform (equal block counts) | flops (equal FLOPs, PipeDream-style) | auto (planned from
  // each node's measured block costs, and moved live) | "0-9,10-17"
  std::string partition = "uniform";
  bool explainPartition = false;  // --explain-partition: rank 0 prints the cost table and the plan
  bool keepPartition = false;     // --keep-partition: auto plans once and never moves the boundaries
  bool enabled() const { return stages > 1; }
  bool planned() const { return partition == "auto"; }
};

// `balancenet launch`: each worker runs the user's program instead of this binary (launch/LocalLauncher.h).
struct ProgramOptions {
  std::string python;                           // --python, resolved to an absolute path; empty with --no-python
  std::vector<std::string> argv;                // {python, script, args...}, or with --no-python {program, args...}
  std::string executable;                       // the file exec'd: the python, or the program found as execvp would
  bool given() const { return !argv.empty(); }  // else the workers are this binary (train, federate)
};

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
  int threads = 1;          // intra-op threads per worker
  std::string threadsFrom;  // how a worker's default threads were chosen (WorkerThreads.h); empty: --threads
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
  // As given, to start workers with; for `balancenet launch`, its flag words only (the launcher hands them to the
  // program in BALANCENET_LAUNCH_ARGS).
  std::vector<std::string> argv;
  // Set by `balancenet federate`: rank 0 is the federated server, ranks 1..N its clients 0..N-1; a client's
  // death does not end the job (see docs/federated.md).
  std::optional<federated::FederatedOptions> federated;
};

}  // namespace balancenet::job

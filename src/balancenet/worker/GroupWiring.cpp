// One wiring of monitor and allocator for every kind of process that trains in the job's groups.
#include "balancenet/worker/GroupWiring.h"

#include <ATen/Parallel.h>

#include "balancenet/adaptive/GlobalBatchSizer.h"
#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceWork.h"
#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/orchestrator/ProbePeers.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
#include "balancenet/worker/GenerationConfig.h"

namespace balancenet::worker {
using job::JobConfig;
namespace {

// Link probes on their own side group and thread (training never waits for them), over the pairs --probe-peers
// selects; memory alone for a group of one or without probes.
std::unique_ptr<monitor::NodeMonitor> makeNodeMonitor(const JobConfig& c, comm::Communicator& comm,
                                                      const comm::RendezvousOptions& rv, bool linkProbes) {
  if (comm.size() == 1 || !linkProbes) return std::make_unique<monitor::NodeMonitor>(nullptr);
  monitor::NodeMonitor::Options options;
  options.probeSelection =
      orchestrator::probeSelection(comm.rank(), comm.size(), c.orchestration.probePeers, c.trainer.seed);
  return std::make_unique<monitor::NodeMonitor>(comm::sideGroup(comm, comm::kProbeGroupPrefix, rv), options);
}

// What the orchestrator reads of the node between its steps: the monitor thread's latest figures, and the GEMM
// prior (a speed before any step is timed). A GPU worker's memory is its GPU's (free, total, the caching allocator's
// peak), which is what caps its share unless the profile's shareCap says otherwise.
orchestrator::NodeSampler monitorSampler(const monitor::NodeMonitor& monitor, const ProcessProfile& profile) {
  return [&monitor, gemmFlops = profile.gemmFlops, device = profile.device, shareCap = profile.shareCap] {
    const auto snap = monitor.snapshot();
    orchestrator::NodeSample sample{snap.residentBytes, snap.memoryTotalBytes,        snap.memoryAvailableBytes,
                                    snap.latencyMs,     snap.bandwidthBytesPerSecond, gemmFlops,
                                    snap.latencyPeers};
    if (device.is_cuda()) {
      const auto gpu = device::deviceMemory(device);
      sample.residentBytes = static_cast<double>(gpu.peakAllocatedBytes);
      sample.memoryTotalBytes = static_cast<double>(gpu.totalBytes);
      sample.memoryAvailableBytes = static_cast<double>(gpu.freeBytes);
    }
    sample.shareCap = shareCap;
    return sample;
  };
}

// The chooser of B for --global-batch auto or a schedule; null for a fixed B.
std::unique_ptr<orchestrator::BatchSizer> makeBatchSizer(const JobConfig& c) {
  const auto& sizing = c.orchestration.batchSizing;
  if (!sizing.adaptive()) return nullptr;
  const auto rule = adaptive::parseLrScaling(sizing.lrScaling, c.trainer.optimizer.name);
  // Throughput for each B is predicted as the policy will split it: balanced by its optimum, the others by
  // the proportions of the split in force.
  return std::make_unique<adaptive::GlobalBatchSizer>(sizing, rule, c.trainer.globalBatch,
                                                      c.orchestration.policy == "balanced");
}

// The policy's orchestrator over `comm` (the split is over its ranks), or a fixed split where the orchestrator's
// periodic gather cannot be afforded (SSP).
std::unique_ptr<orchestrator::Allocator> allocatorFor(const JobConfig& c, comm::Communicator& comm,
                                                      const models::ModelInfo& model, orchestrator::NodeSampler sampler,
                                                      orchestrator::OrchestratorOptions options, bool leaveOut) {
  // The orchestrator's periodic gather is a barrier, which SSP exists to avoid: a fixed split instead.
  if (c.comm.staleness > 0) return std::make_unique<orchestrator::StaticAllocator>(c.split);
  orchestrator::PolicyOptions policy;
  policy.name = c.orchestration.policy;
  policy.seed = c.trainer.seed;
  policy.staticSplit = c.split;
  policy.bnoNormalize = c.orchestration.bnoNormalize;
  policy.balanced.leaveOut = leaveOut;
  policy.balanced.offloadBelow = c.comm.offloadBelow;
  options.rebalanceEvery = c.orchestration.rebalanceEvery;
  options.probePeers = c.orchestration.probePeers;
  options.rebalanceBudget = c.orchestration.rebalanceBudget;
  options.globalBatch = c.trainer.globalBatch;
  options.flopsPerSample = static_cast<double>(model.flopsPerSample);
  options.memoryPerSampleBytes = static_cast<double>(model.memoryPerSampleBytes);
  options.runDir = c.trainer.runDir;
  return std::make_unique<orchestrator::Orchestrator>(orchestrator::makePolicy(policy), c.split, comm,
                                                      std::move(sampler), options, makeBatchSizer(c));
}

}  // namespace

bool leavesOutAllowed(const JobConfig& c, const ProcessProfile& profile) {
  using comm::CommMode;
  const CommMode m = c.comm.mode;
  const bool allReducing = m == CommMode::Auto || m == CommMode::AllReduce || m == CommMode::Flat ||
                           m == CommMode::HalvingDoubling || m == CommMode::AllToAll;
  return profile.emptyShares && allReducing && c.comm.offloadBelow > 0 && c.comm.staleness == 0 && !c.syncBatchNorm &&
         !c.orchestration.batchSizing.adaptive();
}

double processGemmFlops(const c10::Device& device) {
  return metrics::rateWithThreads(metrics::processGemmPeak(device), at::get_num_threads());
}

GroupWiring::GroupWiring(const JobConfig& config, const comm::RendezvousOptions& rv, ProcessProfile profile)
    : config_(config), rv_(rv), profile_(profile) {}

GroupWiring::~GroupWiring() { release(); }

void GroupWiring::startMonitor(comm::Communicator& comm) {
  comm_ = &comm;
  monitor_ = makeNodeMonitor(config_, comm, rv_, profile_.linkProbes);
}

void GroupWiring::makeAllocator(const elastic::Generation& generation, int workersBefore,
                                const models::ModelInfo& model) {
  if (!monitor_) throw InternalError("GroupWiring: the monitor starts before the allocator");
  const JobConfig members = forMembers(config_, generation.members);
  allocator_ = allocatorFor(members, *comm_, model, monitorSampler(*monitor_, profile_),
                            splitLogStart(generation, workersBefore), leavesOutAllowed(members, profile_));
}

void GroupWiring::makeAllocator(const JobConfig& resolved, const models::ModelInfo& model) {
  if (!monitor_) throw InternalError("GroupWiring: the monitor starts before the allocator");
  allocator_ = allocatorFor(resolved, *comm_, model, monitorSampler(*monitor_, profile_), {},
                            leavesOutAllowed(resolved, profile_));
}

void GroupWiring::stopMonitor() {
  if (monitor_) monitor_->stop();
}

void GroupWiring::release() {
  stopMonitor();
  allocator_.reset();
  monitor_.reset();
  comm_ = nullptr;
}

}  // namespace balancenet::worker

// GroupWiring: what a process of the job hangs on the group it trains in, made one way for the C++ worker, the
// pipeline worker's column heads and the Python session: the node monitor (link probes on a side group, over the
// pairs --probe-peers selects) and the allocator that samples it with this process's GEMM prior. A membership
// change drops both with the old group and makes them again over the new one. (The gradient sync is the one
// factory's, SyncFactory.h; the session's is the user's DDP hook.)
#pragma once
#include <cstdint>
#include <memory>

#include <c10/core/Device.h>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/elastic/Membership.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/monitor/NodeMonitor.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/orchestrator/Orchestrator.h"

namespace balancenet::worker {

// This process, the same in every generation.
struct ProcessProfile {
  c10::Device device = c10::Device(c10::DeviceType::CPU);  // where it computes: a GPU's memory is what it samples
  double gemmFlops = 0;                                    // the allocator's prior ops/s (processGemmFlops)
  int64_t shareCap = 0;    // the largest share its memory holds (NodeSample::shareCap); 0: none
  bool linkProbes = true;  // false: memory alone (the pipeline's column heads: no probes among stage groups)
  // Its engine runs a step with a share of 0 (the C++ data-parallel Trainer: a probe, no hand-over), so the balanced
  // policy may leave it out of the exchange (leavesOutAllowed). The Python session's DDP step and the pipeline's
  // stages cannot.
  bool emptyShares = false;
};

// Whether the balanced policy may leave a rank of this job out of the exchange (a share of 0): the engine can run one
// (profile.emptyShares) and every exchange the job may run takes it out of the ring and sends it the sum (an
// all-reducing --comm with --offload-below's hand-over), with no collective inside forward (--sync-bn) and no per-rank
// gradient norm to divide by its share (an adaptive B).
bool leavesOutAllowed(const job::JobConfig& c, const ProcessProfile& profile);

// The allocator's prior ops/s: this process's one GEMM probe (metrics::processGemmPeak) at its intra-op threads.
double processGemmFlops(const c10::Device& device);

class GroupWiring {
 public:
  GroupWiring(const job::JobConfig& config, const comm::RendezvousOptions& rv, ProcessProfile profile);
  ~GroupWiring();
  GroupWiring(const GroupWiring&) = delete;
  GroupWiring& operator=(const GroupWiring&) = delete;

  // The monitor over `comm` (which must outlive it, until release): probes on a side group and their own thread,
  // memory alone for a group of one or without link probes.
  void startMonitor(comm::Communicator& comm);
  // The allocator over the monitor's group for `generation`'s members (the job's split for them: forMembers), its
  // splits.csv rows going on after `workersBefore`'s (splitLogStart). `model`: the FLOP count and memory estimate
  // the policies read (none for a user's model).
  void makeAllocator(const elastic::Generation& generation, int workersBefore, const models::ModelInfo& model);
  // The same for a job already resolved for this group (a pipeline's columns and the plan's split), rows from the
  // start.
  void makeAllocator(const job::JobConfig& resolved, const models::ModelInfo& model);
  // Before the group goes: the monitor stopped, the allocator dropped (rank 0's writes the rest of splits.csv).
  void release();
  void stopMonitor();

  orchestrator::Allocator& allocator() { return *allocator_; }
  bool hasAllocator() const { return allocator_ != nullptr; }

 private:
  const job::JobConfig& config_;
  const comm::RendezvousOptions& rv_;
  const ProcessProfile profile_;
  comm::Communicator* comm_ = nullptr;  // the group the monitor was started over
  std::unique_ptr<monitor::NodeMonitor> monitor_;
  std::unique_ptr<orchestrator::Allocator> allocator_;
};

}  // namespace balancenet::worker

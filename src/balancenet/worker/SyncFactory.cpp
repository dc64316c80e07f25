// Strategy choice by name.
#include "balancenet/worker/SyncFactory.h"

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/OffloadSync.h"
#include "balancenet/comm/SufficientFactorSync.h"
#include "balancenet/commchoice/AutoSync.h"
#include "balancenet/emulation/EmulatedLink.h"
#include "balancenet/emulation/StragglerSync.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/ps/PsGroup.h"
#include "balancenet/ps/PsWorkerSync.h"

namespace balancenet::worker {
using job::CommOptions;
using job::EmulationOptions;
using job::JobConfig;
using job::rendezvousOptions;

void installLinkEmulation(comm::Communicator& comm, const EmulationOptions& e) {
  if (e.netDelayMs.empty() && e.netBandwidthMbps.empty()) return;
  std::vector<double> bytesPerSecond;
  for (double mbps : e.netBandwidthMbps) bytesPerSecond.push_back(mbps * 1e6 / 8);
  comm.setLinkModel(std::make_shared<emulation::EmulatedLink>(e.netDelayMs, bytesPerSecond));
}

bool capturesFactors(const CommOptions& comm) { return comm::capturesFactors(comm.mode); }

namespace {

// The exchanges that sum the whole gradient, by --comm name: what --comm auto tries, in order of preference
// (a tie goes to the earlier: the overlapped buckets, then the ring, as before auto existed).
std::unique_ptr<comm::GradientSync> makeAllReduce(comm::CommMode mode, comm::Communicator& comm, models::Network& net,
                                                  const comm::BucketOptions& buckets) {
  const auto params = comm::namedParameters(net);
  switch (mode) {
    case comm::CommMode::Flat:
      return std::make_unique<comm::FlatAllReduceSync>(comm, comm::Exchange::Ring, params);
    case comm::CommMode::HalvingDoubling:
      return std::make_unique<comm::FlatAllReduceSync>(comm, comm::Exchange::HalvingDoubling, params);
    case comm::CommMode::AllToAll:
      return std::make_unique<comm::FlatAllReduceSync>(comm, comm::Exchange::AllToAll, params);
    default:
      return std::make_unique<comm::BucketedAllReduceSync>(comm, params, buckets);
  }
}

// --comm auto's candidates (alone, every exchange is none: the flat one, which skips its all-reduce).
std::unique_ptr<comm::GradientSync> makeAutoSync(comm::Communicator& comm, models::Network& net,
                                                 const comm::BucketOptions& buckets) {
  if (comm.size() == 1) return std::make_unique<comm::FlatAllReduceSync>(comm);
  std::vector<commchoice::Candidate> candidates;
  for (auto mode :
       {comm::CommMode::AllReduce, comm::CommMode::Flat, comm::CommMode::HalvingDoubling, comm::CommMode::AllToAll})
    candidates.push_back({comm::commModeName(mode), makeAllReduce(mode, comm, net, buckets)});
  return std::make_unique<commchoice::AutoSync>(comm, std::move(candidates));
}

}  // namespace

std::unique_ptr<comm::GradientSync> makeGradientSync(comm::Communicator& comm, models::Network& net,
                                                     const JobConfig& c) {
  comm::BucketOptions buckets;
  buckets.bucketMb = c.comm.bucketMb;
  buckets.overlap = c.comm.overlap;
  std::unique_ptr<comm::GradientSync> sync;
  if (c.comm.mode == comm::CommMode::Auto) {
    sync = makeAutoSync(comm, net, buckets);
  } else if (capturesFactors(c.comm)) {
    comm::FactorSyncOptions factors;
    factors.hybrid = c.comm.mode == comm::CommMode::Hybrid;
    factors.buckets = buckets;
    factors.initialBatches = c.split.batches;
    sync = std::make_unique<comm::SufficientFactorSync>(comm, net, factors);
  } else if (c.comm.mode == comm::CommMode::ParameterServers) {
    const auto rv = rendezvousOptions(c);
    auto group = ps::joinPsGroup(comm.sharedStore(), comm.rank(), comm.size(), c.comm.servers, rv.timeout,
                                 rv.glooHost(), rv.iface);
    installLinkEmulation(*group, c.emulation);  // pushes and pulls cross the emulated links too
    sync =
        std::make_unique<ps::PsWorkerSync>(std::move(group), comm::namedParameters(net), comm.size(), c.comm.staleness);
  } else {
    sync = makeAllReduce(c.comm.mode, comm, net, buckets);
  }
  if (comm::allReduces(c.comm.mode) && c.comm.offloadBelow > 0)
    sync = std::make_unique<comm::OffloadSync>(comm, comm::namedParameters(net), std::move(sync), c.comm.offloadBelow);
  const auto& e = c.emulation;
  const int rank = comm.rank();
  if (!e.slowdown.empty())
    sync = std::make_unique<emulation::StragglerSync>(std::move(sync), emulation::StragglerSync::Mode::Relative,
                                                      e.slowdown, rank);
  else if (!e.nodeSpeed.empty())
    sync = std::make_unique<emulation::StragglerSync>(std::move(sync), emulation::StragglerSync::Mode::Paced,
                                                      e.nodeSpeed, rank);
  return sync;
}

}  // namespace balancenet::worker

// Strategy choice by name.
#include "balancenet/worker/SyncFactory.h"

#include <fmt/format.h>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/OffloadSync.h"
#include "balancenet/comm/SufficientFactorSync.h"
#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/commchoice/AutoSync.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/Error.h"
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

comm::Exchange exchangeOf(comm::CommMode mode) {
  if (mode == comm::CommMode::HalvingDoubling) return comm::Exchange::HalvingDoubling;
  if (mode == comm::CommMode::AllToAll) return comm::Exchange::AllToAll;
  return comm::Exchange::Ring;
}

// An exchange that sums the whole gradient, by --comm name, its wire type `compression` (allreduce and flat only),
// with --offload-below's hand-over in skewed steps (its fast ranks all-reduce by the same algorithm).
std::unique_ptr<comm::GradientSync> makeAllReduce(comm::CommMode mode, comm::Communicator& comm, models::Network& net,
                                                  const job::CommOptions& options,
                                                  const compression::CompressionOptions& compression) {
  const auto params = comm::namedParameters(net);
  std::unique_ptr<comm::GradientSync> sync;
  if (mode == comm::CommMode::AllReduce) {
    comm::BucketOptions buckets;
    buckets.bucketMb = options.bucketMb;
    buckets.overlap = options.overlap;
    buckets.compression = compression;
    sync = std::make_unique<comm::BucketedAllReduceSync>(comm, params, buckets);
  } else {
    sync = std::make_unique<comm::FlatAllReduceSync>(comm, exchangeOf(mode), params, compression);
  }
  if (options.offloadBelow > 0)
    sync = std::make_unique<comm::OffloadSync>(comm, params, std::move(sync), options.offloadBelow, exchangeOf(mode));
  return sync;
}

// The PowerSGD rank --comm auto --allow-lossy-comm tries: rank 1 lost 2.7 points of accuracy at 600 steps, rank 4
// 0.2 (docs/benchmarks.md), and still sent 7.5x fewer bytes on the slow link.
constexpr int kAutoPowerSgdRank = 4;

// --comm auto's candidates, in order of preference (a tie goes to the earlier: the overlapped buckets, then the
// ring, as before auto existed). A job of one worker has nothing to exchange: it gets the flat sync, which skips
// its all-reduce when the group has one rank.
std::unique_ptr<comm::GradientSync> makeAutoSync(comm::Communicator& comm, models::Network& net,
                                                 const job::CommOptions& options) {
  if (comm.size() == 1) return std::make_unique<comm::FlatAllReduceSync>(comm);
  std::vector<commchoice::Candidate> candidates;
  std::vector<comm::CommMode> modes{comm::CommMode::AllReduce, comm::CommMode::Flat};
  // hd and a2a are exchanges over the group's Gloo mesh; where NCCL sums the gradients it picks its own algorithm,
  // so they would only repeat flat. They sum float32 only, so a compressed job leaves them out.
  const bool compressed = compression::compresses(options.compression);
  if (!comm.hasGpuGroup() && !compressed)
    modes.insert(modes.end(), {comm::CommMode::HalvingDoubling, comm::CommMode::AllToAll});
  // A candidate's name says its wire type where it is not float32 ("allreduce+bf16"): summary.json shows the choice.
  const auto nameOf = [](comm::CommMode mode, const compression::CompressionOptions& wire) {
    return compression::compresses(wire)
               ? fmt::format("{}+{}", comm::commModeName(mode), compression::gradCompressionName(wire))
               : std::string(comm::commModeName(mode));
  };
  for (auto mode : modes)
    candidates.push_back(
        {nameOf(mode, options.compression), makeAllReduce(mode, comm, net, options, options.compression)});
  // --allow-lossy-comm: fewer bits on the wire, from the least lossy up (each must beat those before it by
  // kLossyMargin): bf16 on both ring exchanges, then int8 and PowerSGD at rank 4 (within a point of float32 at 600
  // steps: docs/benchmarks.md) on the overlapped buckets. They win only where sending is the step. Every rank joins
  // their ring: --offload-below's hand-over travels float32 both ways, so on a slow host's slow link (T1-slow) it
  // would cost that link more than its share of a compressed ring.
  if (options.allowLossy && !compressed) {
    auto inRing = options;
    inRing.offloadBelow = 0;
    const auto parts = comm::partsOf(comm::namedParameters(net));
    const auto lossy = [&](compression::GradCompression kind, std::vector<comm::CommMode> lossyModes) {
      compression::CompressionOptions wire;
      wire.kind = kind;
      wire.rank = kAutoPowerSgdRank;
      if (!comm::compressesSome(wire, parts)) return;
      for (auto mode : lossyModes)
        candidates.push_back({nameOf(mode, wire), makeAllReduce(mode, comm, net, inRing, wire), true});
    };
    lossy(compression::GradCompression::Bf16, {comm::CommMode::AllReduce, comm::CommMode::Flat});
    lossy(compression::GradCompression::Int8, {comm::CommMode::AllReduce});
    lossy(compression::GradCompression::PowerSgd, {comm::CommMode::AllReduce});
  }
  return std::make_unique<commchoice::AutoSync>(comm, std::move(candidates));
}

}  // namespace

std::unique_ptr<comm::GradientSync> makeGradientSync(comm::Communicator& comm, models::Network& net,
                                                     const JobConfig& c) {
  std::unique_ptr<comm::GradientSync> sync;
  if (c.comm.mode == comm::CommMode::Auto) {
    sync = makeAutoSync(comm, net, c.comm);
  } else if (capturesFactors(c.comm)) {
    comm::FactorSyncOptions factors;
    factors.hybrid = c.comm.mode == comm::CommMode::Hybrid;
    factors.buckets.bucketMb = c.comm.bucketMb;
    factors.buckets.overlap = c.comm.overlap;
    factors.initialBatches = c.split.batches;
    sync = std::make_unique<comm::SufficientFactorSync>(comm, net, factors);
  } else if (c.comm.mode == comm::CommMode::ParameterServers) {
    const auto rv = rendezvousOptions(c);
    auto group = ps::joinPsGroup(comm.sharedStore(), comm.rank(), comm.size(), c.comm.servers, rv.timeout,
                                 rv.glooHost(), rv.iface);
    installLinkEmulation(*group, c.emulation);  // pushes and pulls cross the emulated links too
    sync = std::make_unique<ps::PsWorkerSync>(std::move(group), comm::namedParameters(net), comm.size(),
                                              c.comm.staleness, c.comm.compression);
  } else {
    sync = makeAllReduce(c.comm.mode, comm, net, c.comm, c.comm.compression);
  }
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

std::unique_ptr<comm::GradientSync> makeStageSync(comm::Communicator& stage, const JobConfig& c) {
  const comm::CommMode mode = c.comm.mode == comm::CommMode::Auto ? comm::CommMode::Flat : c.comm.mode;
  if (mode != comm::CommMode::Flat && mode != comm::CommMode::HalvingDoubling && mode != comm::CommMode::AllToAll)
    throw InternalError(fmt::format("--comm {} reached a pipeline stage", comm::commModeName(c.comm.mode)));
  return std::make_unique<comm::FlatAllReduceSync>(stage, exchangeOf(mode));
}

}  // namespace balancenet::worker

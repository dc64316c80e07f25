// The offloaded step: pack, hand over or gather-add, ring all-reduce among the fast ranks, hand back.
#include "balancenet/comm/OffloadSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Stopwatch.h"
#include "balancenet/core/Timeline.h"

namespace balancenet::comm {
namespace {

// Tags of the two point-to-point messages (the main group carries no other tagged traffic).
constexpr int kTagToPeer = 1501;
constexpr int kTagFromPeer = 1502;

}  // namespace

OffloadSync::OffloadSync(Communicator& comm, ParameterList params, std::unique_ptr<GradientSync> whenEven, double below,
                         Exchange ringExchange)
    : comm_(comm),
      params_(std::move(params)),
      whenEven_(std::move(whenEven)),
      below_(below),
      ringExchange_(ringExchange) {}

void OffloadSync::beginStep(const SyncContext& context) {
  // A split that is not this group's (tests may give none) decides nothing: nobody offloads.
  const bool known = static_cast<int>(context.batches.size()) == comm_.size();
  plan_ = planOffload(known ? context.batches : std::vector<int64_t>{}, below_);
  if (!plan_.offloads()) {
    whenEven_->beginStep(context);
    return;
  }
  // Formed here, before forward, so a new member set's connection set-up is not charged to the sync.
  if (plan_.peerOf[comm_.rank()] < 0 && plan_.ring.size() > 1) comm_.keptSubgroup(plan_.ring);
}

SyncStats OffloadSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                   const SyncContext& context) {
  if (!plan_.offloads()) return whenEven_->synchronize(grads, scalars, context);
  Stopwatch watch;
  packGradients(grads, scalars, buffer_);
  const int peer = plan_.peerOf[comm_.rank()];
  SyncStats stats = peer >= 0 ? handToPeer(peer, context) : sumForClients(context);
  // The chain every rank's step hangs on, whichever part of it the rank waits on itself: the hand-over, the
  // ring among the fast ranks, the hand-back.
  stats.phases = 2 + exchangePhases(ringExchange_, static_cast<int>(plan_.ring.size()));
  unpackGradients(buffer_, grads, scalars);
  stats.elapsedMs = watch.elapsedMs();
  return stats;
}

SyncStats OffloadSync::handToPeer(int peer, const SyncContext& context) {
  const int64_t bytes = buffer_.numel() * static_cast<int64_t>(sizeof(float));
  comm_.sendAsync(buffer_, peer, kTagToPeer)
      .wait(context.timeline, "hand to peer", fmt::format("send to rank {} ({:.2f} MB)", peer, bytes / 1048576.0));
  comm_.recvAsync(buffer_, peer, kTagFromPeer)
      .wait(context.timeline, "wait for sum", fmt::format("recv from rank {}", peer));
  SyncStats stats;
  stats.bytesSent = stats.bytesReceived = bytes;
  stats.layers = trafficByLayer(params_, "offload", [](int64_t b) { return b; });
  return stats;
}

SyncStats OffloadSync::sumForClients(const SyncContext& context) {
  const auto clients = plan_.clientsOf(comm_.rank());
  fromClients_.resize(clients.size());
  std::vector<PendingWork> receives;
  for (size_t i = 0; i < clients.size(); ++i) {
    if (!fromClients_[i].defined() || fromClients_[i].numel() != buffer_.numel())
      fromClients_[i] = at::empty_like(buffer_);
    receives.push_back(comm_.recvAsync(fromClients_[i], clients[i], kTagToPeer));
  }
  // In client order, so the sum is the same whichever message arrives first.
  for (size_t i = 0; i < clients.size(); ++i) {
    receives[i].wait(context.timeline, "wait for client", fmt::format("recv from rank {}", clients[i]));
    buffer_.add_(fromClients_[i]);
  }
  const int ringSize = static_cast<int>(plan_.ring.size());
  if (ringSize > 1) {
    auto& ring = comm_.keptSubgroup(plan_.ring);
    if (ringExchange_ == Exchange::Ring) {
      ring.allreduceSumAsync(buffer_).wait(context.timeline, "wait ring",
                                           fmt::format("all-reduce among ranks {}", fmt::join(plan_.ring, ",")));
    } else {
      Timeline::Span span(context.timeline, "wait ring", "sync");
      ring.allreduceSum(buffer_, ringExchange_);
    }
  }
  std::vector<PendingWork> sends;
  for (int client : clients) sends.push_back(comm_.sendAsync(buffer_, client, kTagFromPeer));
  for (auto& s : sends) s.wait();

  const auto handled = static_cast<int64_t>(clients.size());
  auto wire = [ringSize, handled](int64_t b) { return ringAllReduceWireBytes(b, ringSize) + handled * b; };
  SyncStats stats;
  stats.bytesSent = stats.bytesReceived = wire(buffer_.numel() * static_cast<int64_t>(sizeof(float)));
  stats.layers = trafficByLayer(params_, "offload", wire);
  return stats;
}

std::string OffloadSync::explain() const {
  return fmt::format(
             "offload: in a step where a rank's share is below {} of the largest, it hands its gradient to a ring "
             "peer (1 send + 1 recv) and the other ranks all-reduce among themselves ({}); otherwise:\n",
             below_, exchangeName(ringExchange_)) +
         whenEven_->explain();
}

}  // namespace balancenet::comm

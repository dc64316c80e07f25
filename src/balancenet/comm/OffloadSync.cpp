// The offloaded step: pack, hand over or gather-add, ring all-reduce among the fast ranks, hand back.
#include "balancenet/comm/OffloadSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/core/Timeline.h"

namespace balancenet::comm {
namespace {

// Tags of the two point-to-point messages (the main group carries no other tagged traffic).
constexpr int kTagToPeer = 1501;
constexpr int kTagFromPeer = 1502;

}  // namespace

OffloadSync::OffloadSync(Collectives& comm, ParameterList params, std::unique_ptr<GradientSync> whenEven, double below,
                         Exchange ringExchange)
    : comm_(comm),
      params_(std::move(params)),
      whenEven_(std::move(whenEven)),
      below_(below),
      ringExchange_(ringExchange) {}

OffloadSync::~OffloadSync() {
  try {
    finishHandBacks();
  } catch (const std::exception&) {
    // A group torn down under a failure: its sends go with it.
  }
}

void OffloadSync::finishHandBacks() {
  for (auto& send : handBacks_) send.wait();
  handBacks_.clear();
}

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
  // A peer's receives go up before its forward: a client's gradient then crosses while the peer computes, instead
  // of after the peer is ready (on T1, 8 ms of every step).
  if (plan_.peerOf[comm_.rank()] < 0) postClientReceives(context.scalars);
}

int64_t OffloadSync::packedNumel(int64_t scalars) const {
  int64_t numel = scalars;
  for (const auto& p : params_) numel += p.tensor.numel();
  return numel;
}

void OffloadSync::postClientReceives(int64_t scalars) {
  const auto clients = plan_.sendersTo(comm_.rank());  // a left-out client sends nothing
  const int64_t numel = packedNumel(scalars);
  fromClients_.resize(clients.size());
  clientReceives_.clear();
  for (size_t i = 0; i < clients.size(); ++i) {
    if (!fromClients_[i].defined() || fromClients_[i].numel() != numel)
      fromClients_[i] = at::empty({numel}, params_.front().tensor.options().dtype(at::kFloat));
    clientReceives_.push_back(comm_.recvAsync(fromClients_[i], clients[i], kTagToPeer));
  }
}

SyncStats OffloadSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                   const SyncContext& context) {
  if (!plan_.offloads()) return whenEven_->synchronize(grads, scalars, context);
  Stopwatch watch;
  Stopwatch handBacks;
  finishHandBacks();  // the last step's sums left from buffer_, which is packed again now
  const double handBackMs = handBacks.elapsedMs();
  const int rank = comm_.rank();
  const int peer = plan_.peerOf[rank];
  const bool leftOut = plan_.leftOut[rank];
  // A left-out client's gradient is zero and goes nowhere: on a host capped to a tenth of a core, not packing it is
  // tens of ms of its quota back.
  Stopwatch packing;
  if (!leftOut) packGradients(grads, scalars, buffer_);
  const double packMs = packing.elapsedMs();
  // A client's sum lands in a buffer of its own, posted before its gradient leaves: Gloo then reads it straight in.
  if (peer >= 0) {
    const int64_t numel = packedNumel(scalars.numel());
    if (!returned_.defined() || returned_.numel() != numel)
      returned_ = at::empty({numel}, params_.front().tensor.options().dtype(at::kFloat));
    sum_ = comm_.recvAsync(returned_, peer, kTagFromPeer);
  }
  SyncStats stats = peer < 0 ? sumForClients(context) : leftOut ? takeSum(peer, context) : handToPeer(peer, context);
  // A peer's adding of its clients' gradients and its wait for the last step's sums to leave are its own work; they
  // are a hand-over's cost to weigh only where a client handed a gradient over (a left-out client's sum alone is not).
  if (peer < 0) {
    const double serving = stats.servingMs + handBackMs;
    stats.ownMs += serving;
    stats.servingMs = stats.clientsServed > 0 ? serving : 0;
  }
  // The chain every rank's step hangs on, whichever part of it the rank waits on itself: the hand-over, the
  // ring among the fast ranks, the hand-back.
  stats.phases = 2 + exchangePhases(ringExchange_, static_cast<int>(plan_.ring.size()));
  Stopwatch unpacking;
  unpackGradients(peer >= 0 ? returned_ : buffer_, grads, scalars);
  stats.elapsedMs = watch.elapsedMs();
  // On a host capped to a tenth of a core, packing a few MB is tens of ms the peer waits for, and so is a client's
  // sending of the full gradient for its small share. Its receiving of the sum is as long again (the same bytes at
  // the same pace) but cannot be told from its wait for the others' ring, which must not count: a client that got
  // fast again would look slow for as long as it waits, and never win its share back.
  stats.ownMs += packMs + unpacking.elapsedMs();
  return stats;
}

SyncStats OffloadSync::takeSum(int peer, const SyncContext& context) {
  sum_.wait(context.timeline, "wait for sum", fmt::format("recv from rank {} (left out)", peer));
  SyncStats stats;
  stats.bytesReceived = returned_.numel() * static_cast<int64_t>(sizeof(float));
  stats.layers = trafficByLayer(params_, "offload", [](int64_t) { return int64_t{0}; });
  return stats;
}

SyncStats OffloadSync::handToPeer(int peer, const SyncContext& context) {
  const int64_t bytes = buffer_.numel() * static_cast<int64_t>(sizeof(float));
  Stopwatch sending;
  comm_.sendAsync(buffer_, peer, kTagToPeer)
      .wait(context.timeline, "hand to peer", fmt::format("send to rank {} ({:.2f} MB)", peer, bytes / 1048576.0));
  const double sendMs = sending.elapsedMs();
  sum_.wait(context.timeline, "wait for sum", fmt::format("recv from rank {}", peer));
  SyncStats stats;
  stats.ownMs = 2 * sendMs;  // the send, and the sum's receipt as long again (synchronize() says why)
  stats.bytesSent = stats.bytesReceived = bytes;
  stats.layers = trafficByLayer(params_, "offload", [](int64_t b) { return b; });
  return stats;
}

SyncStats OffloadSync::sumForClients(const SyncContext& context) {
  const auto clients = plan_.clientsOf(comm_.rank());
  const auto senders = plan_.sendersTo(comm_.rank());
  if (clientReceives_.size() != senders.size() ||
      (!fromClients_.empty() && fromClients_.front().numel() != buffer_.numel()))
    throw InternalError(fmt::format("offload: receives for {} client(s) of {} floats posted, the step has {} and {}",
                                    clientReceives_.size(), fromClients_.empty() ? 0 : fromClients_.front().numel(),
                                    senders.size(), buffer_.numel()));
  // In client order, so the sum is the same whichever message arrives first. The wait is the client's lateness (its
  // own compute line, which the policy already sees); the add is what serving it costs.
  double addMs = 0;
  for (size_t i = 0; i < senders.size(); ++i) {
    clientReceives_[i].wait(context.timeline, "wait for client", fmt::format("recv from rank {}", senders[i]));
    Stopwatch adding;
    buffer_.add_(fromClients_[i]);
    addMs += adding.elapsedMs();
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
  clientReceives_.clear();
  // Not waited for here: a client on a capped host reads the sum at its own pace, and the ring ranks' step must not
  // wait on that quota. The next step's pack, or the end, waits for them.
  for (int client : clients) handBacks_.push_back(comm_.sendAsync(buffer_, client, kTagFromPeer));

  // Each client's sum goes back; only those with a share sent a gradient in.
  const auto sentBack = static_cast<int64_t>(clients.size()), takenIn = static_cast<int64_t>(senders.size());
  const int64_t bytes = buffer_.numel() * static_cast<int64_t>(sizeof(float));
  SyncStats stats;
  stats.servingMs = addMs;
  stats.clientsServed = takenIn;
  stats.bytesSent = ringAllReduceWireBytes(bytes, ringSize) + sentBack * bytes;
  stats.bytesReceived = ringAllReduceWireBytes(bytes, ringSize) + takenIn * bytes;
  stats.layers = trafficByLayer(params_, "offload", [ringSize, sentBack](int64_t b) {
    return ringAllReduceWireBytes(b, ringSize) + sentBack * b;
  });
  return stats;
}

std::string OffloadSync::explain() const {
  return fmt::format(
             "offload: in a step where a rank's share is below {} of the largest, it hands its gradient to a ring "
             "peer (1 send + 1 recv) and the other ranks all-reduce among themselves ({}); a rank with a share of 0 "
             "(left out by the balanced policy) sends nothing and gets the sum; otherwise:\n",
             below_, exchangeName(ringExchange_)) +
         whenEven_->explain();
}

}  // namespace balancenet::comm

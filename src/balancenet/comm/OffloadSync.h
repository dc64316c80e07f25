// OffloadSync: slow ranks hand their gradient to a fast peer instead of sitting in every ring phase.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "balancenet/comm/Exchange.h"
#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/OffloadPlan.h"
#include "balancenet/comm/group/Collectives.h"

namespace balancenet::comm {

// Gloo's ring all-reduce has 2(P-1) phases and each needs every member to receive, add and forward a
// chunk, so a CPU-capped host that has used its quota for the period stalls every phase. When the
// split is skewed (OffloadPlan), a slow rank instead sends its share (already weighted: see the
// GradientSync contract) to its ring peer and receives the sum back: 1 send + 1 recv, no reduction.
// The peer adds its clients' shares to its own, the ring ranks all-reduce among themselves (a
// subgroup, formed once per member set and kept), and the peer sends the sum back. The sum is the
// same as the full all-reduce's. Steps whose split has no slow rank (homogeneous hosts, a split no
// rank knows) go to `whenEven` unchanged, so nothing changes there.
class OffloadSync : public GradientSync {
 public:
  // `ringExchange`: how the fast ranks all-reduce among themselves (the job's --comm algorithm).
  OffloadSync(Collectives& comm, ParameterList params, std::unique_ptr<GradientSync> whenEven,
              double below = kDefaultOffloadBelow, Exchange ringExchange = Exchange::Ring);
  ~OffloadSync() override;

  void beginStep(const SyncContext& context) override;
  SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars, const SyncContext& context) override;
  std::string explain() const override;
  void describe(nlohmann::json& extra) const override { whenEven_->describe(extra); }
  std::vector<at::Tensor> saveState() const override { return whenEven_->saveState(); }
  bool loadState(const std::vector<at::Tensor>& state) override { return whenEven_->loadState(state); }

  const OffloadPlan& plan() const { return plan_; }  // of the step begun last

 private:
  SyncStats handToPeer(int peer, const SyncContext& context);
  SyncStats sumForClients(const SyncContext& context);
  SyncStats takeSum(int peer, const SyncContext& context);  // a left-out client's: the sum only
  int64_t packedNumel(int64_t scalars) const;               // floats of a packed gradient with `scalars` after it
  void finishHandBacks();                                   // waits for the sums sent to clients in the last step
  void postClientReceives(int64_t scalars);                 // a peer's, for its clients' gradients of this step

  Collectives& comm_;
  ParameterList params_;
  std::unique_ptr<GradientSync> whenEven_;
  double below_;
  Exchange ringExchange_;
  OffloadPlan plan_;
  at::Tensor buffer_;                   // grads then scalars, reused
  at::Tensor returned_;                 // a client's: the sum from its peer
  PendingWork sum_;                     // a client's receive of it, posted before its hand-over
  std::vector<PendingWork> handBacks_;  // a peer's sends of the sum, still reading from buffer_
  std::vector<at::Tensor> fromClients_;
  std::vector<PendingWork> clientReceives_;  // a peer's, posted by beginStep
};

}  // namespace balancenet::comm

// FlatAllReduceSync: all gradients packed into one buffer and summed with a single all-reduce.
#pragma once
#include "balancenet/comm/Exchange.h"
#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Communicator.h"

namespace balancenet::comm {

// The simplest exact strategy: one message per step, so per-message latency is paid once. It does not
// overlap with backward (that is the bucketed strategy's job). `exchange` picks the all-reduce algorithm
// (--comm flat: the ring; hd, a2a: fewer dependent phases).
class FlatAllReduceSync : public GradientSync {
 public:
  // `params` (the model's, optional): each step's stats then carry the per-layer bytes (layers.csv).
  explicit FlatAllReduceSync(Communicator& comm, Exchange exchange = Exchange::Ring, const ParameterList& params = {});
  SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars, const SyncContext& context) override;
  std::string explain() const override;

 private:
  Communicator& comm_;
  Exchange exchange_;
  std::vector<LayerTraffic> traffic_;  // per layer, the same every step
  at::Tensor buffer_;                  // reused across steps
};

}  // namespace balancenet::comm

// FlatAllReduceSync: all gradients packed into one buffer and summed with a single all-reduce.
#pragma once
#include <memory>

#include "balancenet/comm/Exchange.h"
#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/comm/group/Collectives.h"

namespace balancenet::comm {

// The simplest exact strategy: one message per step, so per-message latency is paid once. It does not
// overlap with backward (that is the bucketed strategy's job). `exchange` picks the all-reduce algorithm
// (--comm flat: the ring; hd, a2a: fewer dependent phases).
class FlatAllReduceSync : public GradientSync {
 public:
  // `params` (the model's, optional): each step's stats then carry the per-layer bytes (layers.csv).
  // `compression` (the ring only; needs `params`): the gradients cross the wire compressed
  // (compressed/BufferAllReduce.h), with error feedback; the scalars (the loss) travel exact beside them.
  explicit FlatAllReduceSync(Collectives& comm, Exchange exchange = Exchange::Ring, const ParameterList& params = {},
                             compression::CompressionOptions compression = {});
  SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars, const SyncContext& context) override;
  std::string explain() const override;
  std::vector<at::Tensor> saveState() const override {
    return compressed_ ? compressed_->saveState() : GradientSync::saveState();
  }
  bool loadState(const std::vector<at::Tensor>& state) override;

 private:
  Collectives& comm_;
  Exchange exchange_;
  ParameterList params_;
  at::Tensor buffer_;                            // reused across steps
  LayerTrafficCache traffic_;                    // per layer: the same every step but when --compress-warmup ends
  std::unique_ptr<BufferAllReduce> compressed_;  // with compression only
};

}  // namespace balancenet::comm

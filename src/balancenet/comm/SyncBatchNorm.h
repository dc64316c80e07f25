// SyncBatchNorm2d: batch statistics over the whole global batch, exact for unequal per-rank batches.
#pragma once
#include <torch/nn/cloneable.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "balancenet/comm/group/Collectives.h"

namespace balancenet::comm {

// Each rank contributes sums (not means) and its own sample count, so a rank with 1 sample and one
// with 100 weigh exactly what they hold; backward all-reduces the two sums the input gradient needs.
// Parameter and buffer names match torch::nn::BatchNorm2d, so checkpoints are interchangeable.
// The group is not owned: whoever owns it seats it with useGroup() and takes it away before dropping it.
class SyncBatchNorm2dImpl : public torch::nn::Cloneable<SyncBatchNorm2dImpl> {
 public:
  // `comm` may be null until useGroup(): training forwards need a group, evaluation does not.
  SyncBatchNorm2dImpl(int64_t channels, Collectives* comm, double momentum = 0.1, double eps = 1e-5);
  void reset() override;
  at::Tensor forward(const at::Tensor& x);
  void useGroup(Collectives* comm) { comm_ = comm; }

  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t channels_;
  Collectives* comm_;
  double momentum_, eps_;
};
TORCH_MODULE(SyncBatchNorm2d);

// Seats `comm` (null: none) in every SyncBatchNorm2d layer of `net`; returns how many there are.
int useGroupForSyncBatchNorm(torch::nn::Module& net, Collectives* comm);

}  // namespace balancenet::comm

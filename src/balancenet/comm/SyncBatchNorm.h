// SyncBatchNorm2d: batch statistics over the whole global batch, exact for unequal per-rank batches.
#pragma once
#include <torch/nn/cloneable.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "balancenet/comm/Communicator.h"

namespace balancenet::comm {

// Each rank contributes sums (not means) and its own sample count, so a rank with 1 sample and one
// with 100 weigh exactly what they hold; backward all-reduces the two sums the input gradient needs.
// Parameter and buffer names match torch::nn::BatchNorm2d, so checkpoints are interchangeable.
class SyncBatchNorm2dImpl : public torch::nn::Cloneable<SyncBatchNorm2dImpl> {
 public:
  SyncBatchNorm2dImpl(int64_t channels, Communicator* comm, double momentum = 0.1, double eps = 1e-5);
  void reset() override;
  at::Tensor forward(const at::Tensor& x);

  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t channels_;
  Communicator* comm_;
  double momentum_, eps_;
};
TORCH_MODULE(SyncBatchNorm2d);

}  // namespace balancenet::comm

// TensorDataset: a dataset held in memory as two tensors (idx, cifar10, npy once loaded).
#pragma once
#include <ATen/core/Tensor.h>

#include "balancenet/data/Dataset.h"

namespace balancenet::data {

class TensorDataset final : public Dataset {
 public:
  // inputs [n, ...] and targets [n, ...]; spec.inputShape/targetShape must be their per-sample shapes.
  TensorDataset(DatasetSpec spec, at::Tensor inputs, at::Tensor targets);
  const DatasetSpec& spec() const override { return spec_; }
  int64_t size() const override { return inputs_.size(0); }
  Batch batch(const std::vector<int64_t>& indices) const override;
  std::vector<int64_t> classLabels() const override;
  const at::Tensor& inputs() const { return inputs_; }
  const at::Tensor& targets() const { return targets_; }

 private:
  DatasetSpec spec_;
  at::Tensor inputs_, targets_;
};

}  // namespace balancenet::data

// TensorDataset: batches by index_select over tensors kept in memory.
#include "balancenet/data/TensorDataset.h"

#include <ATen/ATen.h>

#include <utility>

#include "balancenet/core/Error.h"

namespace balancenet::data {

TensorDataset::TensorDataset(DatasetSpec spec, at::Tensor inputs, at::Tensor targets)
    : spec_(std::move(spec)), inputs_(std::move(inputs)), targets_(std::move(targets)) {
  if (inputs_.size(0) != targets_.size(0)) throw InternalError("TensorDataset: inputs and targets differ in length");
}

Batch TensorDataset::batch(const std::vector<int64_t>& indices) const {
  const auto idx = at::tensor(at::ArrayRef<int64_t>(indices), at::TensorOptions().dtype(at::kLong));
  return {inputs_.index_select(0, idx), targets_.index_select(0, idx)};
}

std::vector<int64_t> TensorDataset::classLabels() const {
  if (spec_.target != TargetKind::Class) return {};
  const at::Tensor t = targets_.to(at::kLong).contiguous();
  return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
}

}  // namespace balancenet::data

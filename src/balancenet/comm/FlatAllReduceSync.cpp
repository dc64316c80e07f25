// Pack, all-reduce (sum), unpack.
#include "balancenet/comm/FlatAllReduceSync.h"

#include <ATen/ATen.h>

#include "balancenet/core/Stopwatch.h"

namespace balancenet::comm {

SyncStats FlatAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                         const SyncContext&) {
  Stopwatch watch;
  int64_t total = scalars.numel();
  for (const auto& g : grads) total += g.numel();
  if (!buffer_.defined() || buffer_.numel() != total) buffer_ = at::empty({total}, at::kFloat);

  int64_t offset = 0;
  auto pack = [&](const at::Tensor& t) {
    buffer_.narrow(0, offset, t.numel()).copy_(t.reshape({-1}));
    offset += t.numel();
  };
  for (const auto& g : grads) pack(g);
  pack(scalars);

  comm_.allreduceSum(buffer_);

  offset = 0;
  auto unpack = [&](const at::Tensor& t) {
    t.copy_(buffer_.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  };
  for (const auto& g : grads) unpack(g);
  unpack(scalars);
  const int64_t wire = ringAllReduceWireBytes(total * static_cast<int64_t>(sizeof(float)), comm_.size());
  return {watch.elapsedMs(), wire, wire};
}

}  // namespace balancenet::comm

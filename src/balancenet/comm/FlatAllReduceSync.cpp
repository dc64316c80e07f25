// Pack, all-reduce (sum), unpack.
#include "balancenet/comm/FlatAllReduceSync.h"

#include <ATen/ATen.h>

#include "balancenet/core/Stopwatch.h"

namespace balancenet::comm {

SyncStats FlatAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                         const SyncContext&) {
  Stopwatch watch;
  packGradients(grads, scalars, buffer_);
  comm_.allreduceSum(buffer_);
  unpackGradients(buffer_, grads, scalars);
  const int64_t wire = ringAllReduceWireBytes(buffer_.numel() * static_cast<int64_t>(sizeof(float)), comm_.size());
  SyncStats stats{watch.elapsedMs(), wire, wire};
  stats.phases = ringAllReducePhases(comm_.size());  // one ring all-reduce
  return stats;
}

}  // namespace balancenet::comm

// Pack, all-reduce (sum), unpack.
#include "balancenet/comm/FlatAllReduceSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Stopwatch.h"

namespace balancenet::comm {

FlatAllReduceSync::FlatAllReduceSync(Communicator& comm, Exchange exchange) : comm_(comm), exchange_(exchange) {}

SyncStats FlatAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                         const SyncContext&) {
  Stopwatch watch;
  packGradients(grads, scalars, buffer_);
  comm_.allreduceSum(buffer_, exchange_);
  unpackGradients(buffer_, grads, scalars);
  const int64_t wire = ringAllReduceWireBytes(buffer_.numel() * static_cast<int64_t>(sizeof(float)), comm_.size());
  SyncStats stats{watch.elapsedMs(), wire, wire};
  stats.phases = exchangePhases(exchange_, comm_.size());
  return stats;
}

std::string FlatAllReduceSync::explain() const {
  return fmt::format("every parameter: one {} all-reduce after backward, {} dependent phases at {} workers\n",
                     exchangeName(exchange_), exchangePhases(exchange_, comm_.size()), comm_.size());
}

}  // namespace balancenet::comm

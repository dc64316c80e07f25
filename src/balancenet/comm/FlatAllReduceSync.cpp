// Pack, all-reduce (sum), unpack.
#include "balancenet/comm/FlatAllReduceSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Stopwatch.h"

namespace balancenet::comm {

namespace {

// layers.csv's method column: the --comm name of the exchange ("allreduce" for the ring, as the buckets').
const char* methodOf(Exchange exchange) {
  switch (exchange) {
    case Exchange::HalvingDoubling:
      return "hd";
    case Exchange::AllToAll:
      return "a2a";
    default:
      return "allreduce";
  }
}

}  // namespace

FlatAllReduceSync::FlatAllReduceSync(Communicator& comm, Exchange exchange, const ParameterList& params)
    : comm_(comm), exchange_(exchange) {
  const int world = comm.size();
  traffic_ = trafficByLayer(params, methodOf(exchange),
                            [world](int64_t bytes) { return ringAllReduceWireBytes(bytes, world); });
}

SyncStats FlatAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                         const SyncContext&) {
  Stopwatch watch;
  packGradients(grads, scalars, buffer_);
  comm_.allreduceSum(buffer_, exchange_);
  unpackGradients(buffer_, grads, scalars);
  const int64_t wire = ringAllReduceWireBytes(buffer_.numel() * static_cast<int64_t>(sizeof(float)), comm_.size());
  SyncStats stats{watch.elapsedMs(), wire, wire};
  stats.phases = exchangePhases(exchange_, comm_.size());
  stats.layers = traffic_;
  return stats;
}

std::string FlatAllReduceSync::explain() const {
  return fmt::format("every parameter: one {} all-reduce after backward, {} dependent phases at {} workers\n",
                     exchangeName(exchange_), exchangePhases(exchange_, comm_.size()), comm_.size());
}

}  // namespace balancenet::comm

// Pack, all-reduce (sum), unpack.
#include "balancenet/comm/FlatAllReduceSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
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

FlatAllReduceSync::FlatAllReduceSync(Communicator& comm, Exchange exchange, const ParameterList& params,
                                     compression::GradCompression compression)
    : comm_(comm), exchange_(exchange), compression_(compression) {
  // The mesh exchanges (hd, a2a) sum float32 only. Alone, nothing crosses a wire: nothing is compressed.
  if (compression::compresses(compression) && exchange != Exchange::Ring)
    throw UsageError("--grad-compress works with the ring exchanges: not hd or a2a");
  if (compression::compresses(compression) && comm.size() > 1) feedback_.emplace(compression);
  const int world = comm.size();
  traffic_ = trafficByLayer(params, methodOf(exchange), [world, wire = compression](int64_t bytes) {
    return ringAllReduceWireBytes(compression::wireBytes(bytes, wire), world);
  });
}

SyncStats FlatAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                         const SyncContext&) {
  Stopwatch watch;
  packGradients(grads, scalars, buffer_);
  int64_t wire = 0;
  if (feedback_) {
    // The gradients compressed, the scalars after them exact: two ring all-reduces, the second tiny.
    const int64_t gradients = buffer_.numel() - scalars.numel();
    auto values = buffer_.narrow(0, 0, gradients);
    auto sent = feedback_->encode(values);
    auto exact = buffer_.narrow(0, gradients, scalars.numel());
    comm_.allreduceSum(sent);
    comm_.allreduceSum(exact);
    values.copy_(sent);
    wire = ringAllReduceWireBytes(sent.nbytes(), comm_.size()) + ringAllReduceWireBytes(exact.nbytes(), comm_.size());
  } else {
    comm_.allreduceSum(buffer_, exchange_);
    wire = ringAllReduceWireBytes(buffer_.numel() * static_cast<int64_t>(sizeof(float)), comm_.size());
  }
  unpackGradients(buffer_, grads, scalars);
  SyncStats stats{watch.elapsedMs(), wire, wire};
  stats.phases = exchangePhases(exchange_, comm_.size()) * (feedback_ ? 2 : 1);
  stats.layers = traffic_;
  return stats;
}

std::string FlatAllReduceSync::explain() const {
  if (feedback_)
    return fmt::format(
        "every parameter: one {} all-reduce after backward in {} with error feedback, the loss beside it in "
        "float32, {} dependent phases at {} workers\n",
        exchangeName(exchange_), compression::gradCompressionName(compression_),
        2 * exchangePhases(exchange_, comm_.size()), comm_.size());
  return fmt::format("every parameter: one {} all-reduce after backward, {} dependent phases at {} workers\n",
                     exchangeName(exchange_), exchangePhases(exchange_, comm_.size()), comm_.size());
}

}  // namespace balancenet::comm

// Pack, all-reduce (sum), unpack.
#include "balancenet/comm/FlatAllReduceSync.h"

#include <stdexcept>

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

FlatAllReduceSync::FlatAllReduceSync(Collectives& comm, Exchange exchange, const ParameterList& params,
                                     compression::CompressionOptions compression)
    : comm_(comm), exchange_(exchange), params_(params) {
  // The mesh exchanges (hd, a2a) sum float32 only. Alone, nothing crosses a wire: nothing is compressed.
  if (compression::compresses(compression) && exchange != Exchange::Ring)
    throw UsageError("--grad-compress works with the ring exchanges: not hd or a2a");
  if (!compression::compresses(compression) || comm.size() == 1) return;
  if (params.empty()) throw std::invalid_argument("FlatAllReduceSync: compression needs the model's parameters");
  const auto parts = partsOf(params);
  checkCompressible(compression, parts);
  compressed_ = makeBufferAllReduce(comm, compression, parts, params.front().tensor.options().dtype(at::kFloat));
}

SyncStats FlatAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                         const SyncContext& context) {
  Stopwatch watch;
  packGradients(grads, scalars, buffer_);
  SyncStats stats;
  if (compressed_) {
    // The gradients compressed, the scalars after them exact in a tiny ring all-reduce of their own.
    const int64_t gradients = buffer_.numel() - scalars.numel();
    auto values = buffer_.narrow(0, 0, gradients);
    auto exact = buffer_.narrow(0, gradients, scalars.numel());
    compressed_->beginStep(context.step);
    compressed_->start(values);
    auto scalarWork = comm_.allreduceSumAsync(exact);
    compressed_->finish(values, context.timeline, "gradients");
    scalarWork.wait();
    stats.bytesSent = compressed_->wireBytes() + ringAllReduceWireBytes(exact.nbytes(), comm_.size());
    stats.phases = compressed_->phases() + ringAllReducePhases(comm_.size());
    stats.layers = traffic_.get(compressed_->wireBytes(), [this] {
      return trafficByParameter(params_, methodOf(exchange_), [this](const NamedParameter& p) {
        return compressed_->wireBytesOf(p.tensor.sizes().vec());
      });
    });
  } else {
    comm_.allreduceSum(buffer_, exchange_);
    stats.bytesSent = ringAllReduceWireBytes(buffer_.numel() * static_cast<int64_t>(sizeof(float)), comm_.size());
    stats.phases = exchangePhases(exchange_, comm_.size());
    stats.layers = traffic_.get(stats.bytesSent, [this] {
      const int world = comm_.size();
      return trafficByLayer(params_, methodOf(exchange_),
                            [world](int64_t bytes) { return ringAllReduceWireBytes(bytes, world); });
    });
  }
  unpackGradients(buffer_, grads, scalars);
  stats.bytesReceived = stats.bytesSent;
  stats.elapsedMs = watch.elapsedMs();
  return stats;
}

bool FlatAllReduceSync::loadState(const std::vector<at::Tensor>& state) {
  if (!sameLayout(saveState(), state)) return false;
  if (compressed_) compressed_->loadState(state);
  return true;
}

std::string FlatAllReduceSync::explain() const {
  if (compressed_)
    return fmt::format(
        "every parameter: one {} exchange after backward as {}, the loss beside it in float32, {} dependent phases "
        "at {} workers\n",
        exchangeName(exchange_), compressed_->describe(), compressed_->phases() + ringAllReducePhases(comm_.size()),
        comm_.size());
  return fmt::format("every parameter: one {} all-reduce after backward, {} dependent phases at {} workers\n",
                     exchangeName(exchange_), exchangePhases(exchange_, comm_.size()), comm_.size());
}

}  // namespace balancenet::comm

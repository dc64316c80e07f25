// Packing the gradient into per-server shards, the push/pull exchange, and the accounting.
#include "balancenet/ps/PsWorkerSync.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/ps/PsGroup.h"

namespace balancenet::ps {
namespace {

constexpr double kMb = 1024.0 * 1024.0;

std::vector<at::Tensor> tensorsOf(const comm::ParameterList& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(p.tensor);
  return out;
}

RuntimeFailure lostServer(int server, int64_t step, const RuntimeFailure& cause) {
  return RuntimeFailure(fmt::format("lost parameter server {} at step {}: {}", server, step, cause.what()));
}

}  // namespace

PsWorkerSync::PsWorkerSync(std::unique_ptr<comm::Communicator> group, comm::ParameterList params, int workers,
                           int staleness, compression::CompressionOptions compression)
    : group_(std::move(group)),
      params_(std::move(params)),
      workers_(workers),
      staleness_(staleness),
      compression_(compression) {
  const int servers = group_->size() - workers_;
  std::vector<int64_t> elements;
  for (const auto& p : params_) {
    if (p.tensor.scalar_type() != at::kFloat)
      throw UsageError(
          fmt::format("--comm ps needs float32 parameters; {} is {}", p.name, c10::toString(p.tensor.scalar_type())));
    elements.push_back(p.tensor.numel());
  }
  int64_t total = 0;
  for (int64_t e : elements) total += e;
  shards_ = layoutShards(total, servers);
  for (const auto& shard : shards_) {
    pieces_.push_back(piecesOf(shard, elements));
    codecs_.emplace_back(compression_, shard.size());
    shardValues_.push_back(compression::compresses(compression_) ? at::zeros({shard.size()}, at::kFloat)
                                                                 : at::Tensor());
    pushes_.emplace_back(codecs_.back().payloadFloats());
    replies_.emplace_back(shard.size());
  }
  // A parameter costs its bytes once each way: pushed in the wire type, pulled in float32.
  int64_t pushedFloats = 0;
  for (const auto& codec : codecs_) pushedFloats += codec.payloadFloats();
  const double pushed = total > 0 ? static_cast<double>(pushedFloats) / static_cast<double>(total) : 1.0;
  traffic_ = comm::trafficByLayer(params_, "ps", [pushed](int64_t bytes) {
    return static_cast<int64_t>((1.0 + pushed) / 2.0 * static_cast<double>(bytes));
  });
}

PsWorkerSync::~PsWorkerSync() = default;

void PsWorkerSync::pack(const at::Tensor& shard, int server, const std::vector<at::Tensor>& tensors) const {
  for (const auto& piece : pieces_[server])
    shard.narrow(0, piece.shardOffset, piece.length)
        .copy_(tensors[piece.tensor].detach().reshape({-1}).narrow(0, piece.tensorOffset, piece.length));
}

void PsWorkerSync::packPush(int server, const std::vector<at::Tensor>& grads) {
  // Float32 pushes are packed straight into the message; compressed ones into the shard, then encoded.
  if (!compression::compresses(compression_)) return pack(pushes_[server].payload(), server, grads);
  pack(shardValues_[server], server, grads);
  codecs_[server].encode(shardValues_[server], pushes_[server].payload());
}

std::vector<at::Tensor> PsWorkerSync::saveState() const {
  if (!compression::compresses(compression_)) return {};
  std::vector<at::Tensor> state;
  for (const auto& codec : codecs_) state.push_back(codec.residual());
  return state;
}

bool PsWorkerSync::loadState(const std::vector<at::Tensor>& state) {
  if (!comm::sameLayout(saveState(), state)) return false;
  for (size_t k = 0; k < state.size(); ++k) codecs_[k].restore(state[k]);
  return true;
}

void PsWorkerSync::unpack(const PsMessage& message, int server) {
  at::NoGradGuard noGrad;
  const auto payload = message.payload();
  for (const auto& piece : pieces_[server])
    params_[piece.tensor]
        .tensor.view({-1})
        .narrow(0, piece.tensorOffset, piece.length)
        .copy_(payload.narrow(0, piece.shardOffset, piece.length));
}

int64_t PsWorkerSync::sendStartParameters() {
  const auto tensors = tensorsOf(params_);
  int64_t bytes = 0;
  for (int k = 0; k < static_cast<int>(shards_.size()); ++k) {
    PsMessage start(shards_[k].size());
    pack(start.payload(), k, tensors);  // the parameters: float32 whatever the pushes' wire type
    try {
      group_->send(start.buffer(), serverRank(workers_, k), kInitTag);
    } catch (const RuntimeFailure& e) {
      throw lostServer(k, 0, e);
    }
    bytes += start.bytes();
  }
  return bytes;
}

void PsWorkerSync::takeScalars(at::Tensor& scalars, const comm::SyncContext& context) const {
  if (staleness_ == 0) {
    const PsHeader h = replies_[0].header();
    for (int i = 0; i < h.scalarCount; ++i) scalars[i] = h.scalars[i];
    return;
  }
  int64_t globalBatch = 0;
  for (int64_t b : context.batches) globalBatch += b;
  if (globalBatch > 0 && context.localBatch > 0) scalars.mul_(static_cast<double>(globalBatch) / context.localBatch);
}

void PsWorkerSync::exchange(const PsHeader& header, const std::vector<at::Tensor>& grads, Timeline* timeline) {
  const int servers = static_cast<int>(shards_.size());
  int server = 0;  // the one being talked to, for the error
  try {
    std::vector<comm::PendingWork> receives;
    {
      Timeline::Span span(timeline, "push", "comm", Timeline::kCommunication);
      std::vector<comm::PendingWork> sends;
      for (server = 0; server < servers; ++server) {
        packPush(server, grads);
        pushes_[server].setHeader(header);
        sends.push_back(group_->sendAsync(pushes_[server].buffer(), serverRank(workers_, server), kPushTag));
        receives.push_back(group_->recvAsync(replies_[server].buffer(), serverRank(workers_, server), kReplyTag));
      }
      for (server = 0; server < servers; ++server) sends[server].wait();
    }
    Timeline::Span span(timeline, "pull-wait", "sync");
    for (server = 0; server < servers; ++server) receives[server].wait();
  } catch (const RuntimeFailure& e) {
    throw lostServer(std::min(server, servers - 1), header.step, e);
  }
}

comm::SyncStats PsWorkerSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                          const comm::SyncContext& context) {
  Stopwatch watch;
  if (grads.size() != params_.size())
    throw RuntimeFailure(
        fmt::format("ps sync built for {} parameters, given {} gradients", params_.size(), grads.size()));
  if (scalars.numel() > kMaxScalars)
    throw RuntimeFailure(fmt::format("ps sync carries at most {} scalars, given {}", kMaxScalars, scalars.numel()));
  comm::SyncStats stats;
  const int servers = static_cast<int>(shards_.size());
  if (!started_ && group_->rank() == 0) {
    stats.bytesSent += sendStartParameters();
    stats.phases += servers;  // one blocking send to each server in turn
  }
  started_ = true;

  PsHeader header;
  header.step = context.step;
  header.lr = context.lr;
  header.scalarCount = scalars.numel();
  const auto values = scalars.to(at::kFloat).contiguous();
  std::copy(values.data_ptr<float>(), values.data_ptr<float>() + values.numel(), header.scalars);
  exchange(header, grads, context.timeline);
  // A round trip is a push and a pull; every server's is posted before any is waited on, so the servers
  // overlap and the step waits on two phases (as an all-to-all's posted exchanges count one).
  stats.phases += 2;
  int64_t slowest = context.step + 1;
  for (int k = 0; k < servers; ++k) {
    const PsHeader h = replies_[k].header();
    if (h.step != context.step + 1)
      throw RuntimeFailure(
          fmt::format("parameter server {} answered step {} with the parameters of step {}", k, context.step, h.step));
    slowest = std::min(slowest, h.slowestClock);
    unpack(replies_[k], k);
    stats.bytesSent += pushes_[k].bytes();
    stats.bytesReceived += replies_[k].bytes();
  }
  largestGap_ = std::max(largestGap_, context.step + 1 - slowest);
  takeScalars(scalars, context);
  stats.layers = traffic_;
  stats.elapsedMs = watch.elapsedMs();
  return stats;
}

std::string PsWorkerSync::explain() const {
  std::string out = staleness_ == 0
                        ? "parameter servers, BSP: each step a server sums every worker's push and applies one "
                          "optimiser step\n"
                        : fmt::format(
                              "parameter servers, SSP (staleness {}): pushes applied on arrival; a worker "
                              "starts step c once the slowest has pushed c - {} steps\n",
                              staleness_, staleness_);
  if (compression::compresses(compression_))
    out += fmt::format("pushes as {} {}; replies (the parameters) float32\n",
                       compression::gradCompressionName(compression_),
                       compression::feedbackName(compression_.errorFeedback));
  out += fmt::format("{} server(s), contiguous equal ranges of the flattened parameters:\n", shards_.size());
  for (size_t k = 0; k < shards_.size(); ++k) {
    std::vector<std::string> names;
    for (const auto& piece : pieces_[k]) {
      const auto& p = params_[piece.tensor];
      names.push_back(piece.length == p.tensor.numel()
                          ? p.name
                          : fmt::format("{}[{}:{}]", p.name, piece.tensorOffset, piece.tensorOffset + piece.length));
    }
    out += fmt::format("  server {}: {:.3f} MB, elements [{}, {}): {}\n", k, shards_[k].size() * 4 / kMb,
                       shards_[k].begin, shards_[k].end, fmt::join(names, ", "));
  }
  return out;
}

}  // namespace balancenet::ps

// Bucket layout, hooks, in-order starts, and the wait at the end of the step.
#include "balancenet/comm/BucketedAllReduceSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"

namespace balancenet::comm {
namespace {

constexpr double kMb = 1024.0 * 1024.0;

}  // namespace

BucketedAllReduceSync::BucketedAllReduceSync(Collectives& comm, ParameterList params, BucketOptions options)
    : comm_(comm), params_(std::move(params)), options_(options) {
  if (options_.bucketMb <= 0 || options_.firstBucketMb <= 0) throw UsageError("bucket sizes must be positive");
  // Reverse order: the order in which backward produces the gradients. DDP's rule: a tensor joins the
  // open bucket, which closes once it holds its cap. (Closing it before a tensor that would overflow it
  // instead put cnn's 4.6 MB fc1 weight in the bucket of the first layers, sent after backward, not
  // during it: 8 ms per step exposed.)
  bucketOf_.assign(params_.size(), -1);
  double capBytes = std::min(options_.firstBucketMb, options_.bucketMb) * kMb;
  int64_t filled = 0;
  bool open = false;
  for (int i = static_cast<int>(params_.size()) - 1; i >= 0; --i) {
    if (!open) {
      buckets_.emplace_back();
      filled = 0;
      open = true;
    }
    auto& bucket = buckets_.back();
    bucket.offsets.push_back(filled / static_cast<int64_t>(sizeof(float)));
    bucket.params.push_back(i);
    bucketOf_[i] = static_cast<int>(buckets_.size()) - 1;
    filled += params_[i].tensor.numel() * static_cast<int64_t>(sizeof(float));
    if (filled >= capBytes) {
      open = false;
      capBytes = options_.bucketMb * kMb;
    }
  }
  // Alone, nothing crosses a wire: nothing is compressed.
  if (comm_.size() == 1) options_.compression = {};
  checkCompressible(options_.compression, partsOf(params_));
  for (auto& bucket : buckets_) {
    int64_t numel = 0;
    std::vector<BufferPart> parts;
    for (int p : bucket.params) {
      numel += params_[p].tensor.numel();
      parts.push_back({p, params_[p].tensor.sizes().vec()});
    }
    // Where the parameters are: a GPU's buckets are summed from GPU memory (NCCL), or through Gloo's host copies.
    const auto device = params_[bucket.params.front()].tensor.options().dtype(at::kFloat);
    bucket.buffer = at::zeros({numel}, device);
    bucket.exchange = makeBufferAllReduce(comm_, options_.compression, parts, device);
  }
  arrived_.assign(params_.size(), false);
  if (options_.overlap)
    for (size_t i = 0; i < params_.size(); ++i) {
      auto& t = params_[i].tensor;
      if (!t.requires_grad()) continue;
      hookIds_.push_back(t.register_hook([this, i](const at::Tensor& grad) { onGradient(static_cast<int>(i), grad); }));
    }
}

BucketedAllReduceSync::~BucketedAllReduceSync() {
  size_t h = 0;
  for (auto& p : params_)
    if (options_.overlap && p.tensor.requires_grad()) p.tensor.remove_hook(hookIds_[h++]);
  // A step abandoned half-way (an exception) may leave buckets in flight: let them finish quietly.
  for (auto& b : buckets_) try {
      if (b.started) b.exchange->abandon();
    } catch (const std::exception&) {
    }
}

void BucketedAllReduceSync::beginStep(const SyncContext& context) {
  armed_ = options_.overlap && context.overlap;
  for (auto& b : buckets_) b.exchange->beginStep(context.step);
  timeline_ = context.timeline;
  nextToStart_ = 0;
  startedEarly_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), false);
  for (auto& b : buckets_) {
    b.missing = static_cast<int>(b.params.size());
    b.started = false;
  }
}

void BucketedAllReduceSync::onGradient(int param, const at::Tensor& grad) {
  if (!armed_) return;
  auto& bucket = buckets_[bucketOf_[param]];
  if (bucket.started)
    throw RuntimeFailure(
        fmt::format("gradient of {} arrived after its bucket was sent (two backward passes in one "
                    "step?); use --no-overlap",
                    params_[param].name));
  size_t slot = 0;
  while (bucket.params[slot] != param) ++slot;
  auto target = bucket.buffer.narrow(0, bucket.offsets[slot], grad.numel()).view(grad.sizes());
  if (arrived_[param]) {
    target.add_(grad);
    return;
  }
  target.copy_(grad);
  arrived_[param] = true;
  if (--bucket.missing == 0) {
    startReadyBuckets();
    startedEarly_ = static_cast<int>(nextToStart_);
  }
}

void BucketedAllReduceSync::startReadyBuckets() {
  while (nextToStart_ < buckets_.size() && buckets_[nextToStart_].missing == 0) startBucket(nextToStart_++);
}

void BucketedAllReduceSync::startBucket(size_t b) {
  auto& bucket = buckets_[b];
  bucket.started = true;
  bucket.exchange->start(bucket.buffer);
}

SyncStats BucketedAllReduceSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                             const SyncContext& context) {
  Stopwatch watch;
  if (grads.size() != params_.size())
    throw RuntimeFailure(
        fmt::format("bucketed sync built for {} parameters, given {} gradients", params_.size(), grads.size()));
  if (!armed_) beginStep(context);  // no overlap: everything is packed here
  armed_ = false;
  // Gradients no hook delivered (overlap off, or a parameter backward did not reach) are packed now.
  for (size_t b = nextToStart_; b < buckets_.size(); ++b) {
    auto& bucket = buckets_[b];
    for (size_t slot = 0; slot < bucket.params.size(); ++slot) {
      const int p = bucket.params[slot];
      if (arrived_[p]) continue;
      bucket.buffer.narrow(0, bucket.offsets[slot], grads[p].numel()).copy_(grads[p].reshape({-1}));
      arrived_[p] = true;
    }
    bucket.missing = 0;
  }
  startReadyBuckets();
  auto scalarWork = comm_.allreduceSumAsync(scalars);

  for (size_t b = 0; b < buckets_.size(); ++b) {
    auto& bucket = buckets_[b];
    bucket.exchange->finish(bucket.buffer, timeline_, fmt::format("bucket {}", b));
    bucket.started = false;
    for (size_t slot = 0; slot < bucket.params.size(); ++slot) {
      const int p = bucket.params[slot];
      grads[p].copy_(bucket.buffer.narrow(0, bucket.offsets[slot], grads[p].numel()).view(grads[p].sizes()));
    }
  }
  scalarWork.wait();

  SyncStats stats;
  const int64_t scalarWire = ringAllReduceWireBytes(scalars.numel() * 4, comm_.size());
  stats.bytesSent = stats.bytesReceived = scalarWire;
  // The scalars' ring all-reduce and each bucket's exchange: c10d runs them one after another.
  stats.phases = ringAllReducePhases(comm_.size());
  for (const auto& bucket : buckets_) {
    stats.bytesSent += bucket.exchange->wireBytes();
    stats.bytesReceived += bucket.exchange->wireBytes();
    stats.phases += bucket.exchange->phases();
  }
  stats.layers = traffic_.get(stats.bytesSent, [this] {
    return trafficByParameter(params_, "allreduce", [this](const NamedParameter& p) {
      const int index = static_cast<int>(&p - params_.data());
      return buckets_[bucketOf_[index]].exchange->wireBytesOf(p.tensor.sizes().vec());
    });
  });
  stats.elapsedMs = watch.elapsedMs();
  return stats;
}

std::vector<std::vector<at::Tensor>> BucketedAllReduceSync::bucketStates() const {
  std::vector<std::vector<at::Tensor>> parts;
  for (const auto& b : buckets_) parts.push_back(b.exchange->saveState());
  return parts;
}

std::vector<at::Tensor> BucketedAllReduceSync::saveState() const { return joinStates(bucketStates()); }

bool BucketedAllReduceSync::loadState(const std::vector<at::Tensor>& state) {
  const auto parts = splitState(bucketStates(), state);
  if (!parts) return false;
  for (size_t b = 0; b < buckets_.size(); ++b) buckets_[b].exchange->loadState((*parts)[b]);
  return true;
}

std::vector<std::vector<int>> BucketedAllReduceSync::bucketLayout() const {
  std::vector<std::vector<int>> out;
  for (const auto& b : buckets_) out.push_back(b.params);
  return out;
}

std::string BucketedAllReduceSync::explain() const {
  std::string out = fmt::format("all-reduce in {} bucket(s), {} backward{}:\n", buckets_.size(),
                                options_.overlap ? "overlapped with" : "after",
                                compression::compresses(options_.compression) && !buckets_.empty()
                                    ? ", sent as " + buckets_.front().exchange->describe()
                                    : "");
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const auto& bucket = buckets_[b];
    out += fmt::format("  bucket {}: {:.3f} MB, {} tensors, {} .. {}\n", b, bucket.buffer.numel() * 4 / kMb,
                       bucket.params.size(), params_[bucket.params.front()].name, params_[bucket.params.back()].name);
  }
  return out;
}

}  // namespace balancenet::comm

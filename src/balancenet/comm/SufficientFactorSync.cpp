// SufficientFactorSync: finding the factor layers, starting their exchanges from backward, rebuilding gradients.
#include "balancenet/comm/SufficientFactorSync.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/module.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"

namespace balancenet::comm {
namespace {

int indexOf(const ParameterList& params, const std::string& name) {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name) return static_cast<int>(i);
  throw std::logic_error("SufficientFactorSync: no parameter " + name);
}

const char* methodOf(const FcDecision& d) { return d.sfb ? "sfb" : "allreduce"; }

}  // namespace

SufficientFactorSync::SufficientFactorSync(Collectives& comm, torch::nn::Module& net, FactorSyncOptions options)
    : comm_(comm), options_(std::move(options)) {
  const auto params = namedParameters(net);
  std::vector<bool> captured(params.size(), false);
  std::vector<FcLayerShape> shapes;
  for (const auto& item : net.named_modules("", /*include_self=*/false)) {
    auto fc = std::dynamic_pointer_cast<FactorLinearImpl>(item.value());
    if (!fc) continue;
    Layer layer;
    layer.module = FactorLinear(fc);
    layer.weight = indexOf(params, item.key() + ".weight");
    captured[layer.weight] = true;
    if (fc->bias.defined()) {
      layer.bias = indexOf(params, item.key() + ".bias");
      captured[layer.bias] = true;
    }
    const size_t l = layers_.size();
    fc->setListener([this, l](const at::Tensor& v, const at::Tensor& u) { onFactors(l, v, u); });
    layers_.push_back(std::move(layer));
    shapes.push_back({item.key(), fc->weight.size(0), fc->weight.size(1), fc->bias.defined()});
  }
  ParameterList rest;
  for (size_t i = 0; i < params.size(); ++i)
    if (!captured[i]) {
      rest.push_back(params[i]);
      restParams_.push_back(static_cast<int>(i));
    }
  parameterCount_ = params.size();
  rest_ = std::make_unique<BucketedAllReduceSync>(comm_, std::move(rest), options_.buckets);
  for (const auto& s : shapes) decisions_.push_back({s});
  decide(options_.initialBatches);
}

SufficientFactorSync::~SufficientFactorSync() {
  for (auto& layer : layers_) {
    layer.module->setListener(nullptr);
    // A step abandoned half-way (an exception) may leave exchanges in flight: let them finish quietly.
    try {
      layer.work.wait();
    } catch (const std::exception&) {
    }
  }
}

void SufficientFactorSync::decide(const std::vector<int64_t>& batches) {
  if (batches.empty()) return;
  if (static_cast<int>(batches.size()) != comm_.size())
    throw RuntimeFailure(
        fmt::format("sufficient factors: split of {} workers for {} ranks", batches.size(), comm_.size()));
  batches_ = batches;
  for (auto& d : decisions_) {
    d = decideFcLayer(d.shape, batches_);
    if (!options_.hybrid) d.sfb = true;
  }
}

void SufficientFactorSync::beginStep(const SyncContext& context) {
  if (context.batches != batches_) decide(context.batches);
  timeline_ = context.timeline;
  armed_ = options_.buckets.overlap && context.overlap;
  startedEarly_ = 0;
  for (auto& layer : layers_) {
    layer.v = layer.u = at::Tensor();
    layer.started = false;
  }
  rest_->beginStep(context);
}

void SufficientFactorSync::onFactors(size_t l, const at::Tensor& v, const at::Tensor& u) {
  auto& layer = layers_[l];
  if (layer.started || layer.u.defined())
    throw RuntimeFailure(
        fmt::format("factors of {} arrived twice in one step (two backward passes?); sfb and "
                    "hybrid need one backward per step",
                    decisions_[l].shape.layer));
  layer.v = v.reshape({-1, v.size(-1)});
  layer.u = u.reshape({-1, u.size(-1)});
  if (!armed_ || batches_.empty()) return;  // without the split, synchronize() reports the error
  start(l);
  ++startedEarly_;
}

void SufficientFactorSync::start(size_t l) {
  auto& layer = layers_[l];
  const auto& d = decisions_[l];
  const int64_t m = d.shape.out, n = d.shape.in;
  const int64_t rows = batches_[comm_.rank()];
  const auto options = layer.module->weight.options();  // the layer's device: a GPU's factors stay there
  if (!layer.u.defined()) {                             // backward did not reach the layer: it contributes nothing
    layer.u = at::zeros({rows, m}, options);
    layer.v = at::zeros({rows, n}, options);
  }
  if (layer.u.size(0) != rows)
    throw RuntimeFailure(
        fmt::format("{}: {} factor rows captured for a local batch of {}", d.shape.layer, layer.u.size(0), rows));
  layer.started = true;
  if (!d.sfb) {
    const auto weight = layer.u.t().mm(layer.v).reshape({-1});
    layer.send = layer.bias >= 0 ? at::cat({weight, layer.u.sum(0)}) : weight;
    layer.work = comm_.allreduceSumAsync(layer.send);
    return;
  }
  // Equal shapes for the all-gather: every rank pads to the largest batch with zero rows.
  const int64_t padded = std::max<int64_t>(1, *std::max_element(batches_.begin(), batches_.end()));
  layer.send = at::zeros({padded, m + n}, options);
  layer.send.narrow(0, 0, rows).narrow(1, 0, m).copy_(layer.u);
  layer.send.narrow(0, 0, rows).narrow(1, m, n).copy_(layer.v);
  layer.gathered.clear();
  for (int r = 0; r < comm_.size(); ++r) layer.gathered.push_back(at::empty_like(layer.send));
  layer.work = comm_.allgatherAsync(layer.send, layer.gathered, sfbSentBytes(d.shape, batches_, comm_.rank()));
}

void SufficientFactorSync::finish(size_t l, const std::vector<at::Tensor>& grads) {
  auto& layer = layers_[l];
  const auto& d = decisions_[l];
  const int64_t m = d.shape.out, n = d.shape.in;
  layer.work.wait(timeline_, fmt::format("wait {} {}", methodOf(d), d.shape.layer),
                  fmt::format("{} {}", methodOf(d), d.shape.layer));
  at::Tensor weight, bias;
  if (d.sfb) {
    const auto all = at::cat(layer.gathered);  // [P * padded, M + N]
    const auto u = all.narrow(1, 0, m);
    weight = u.t().mm(all.narrow(1, m, n));
    bias = u.sum(0);
  } else {
    weight = layer.send.narrow(0, 0, m * n).view({m, n});
    if (layer.bias >= 0) bias = layer.send.narrow(0, m * n, m);
  }
  grads[layer.weight].copy_(weight);
  if (layer.bias >= 0) grads[layer.bias].copy_(bias);
  layer.v = layer.u = layer.send = at::Tensor();
  layer.gathered.clear();
}

void SufficientFactorSync::addTraffic(size_t l, SyncStats& stats) const {
  const auto& d = decisions_[l];
  LayerTraffic t{d.shape.layer, methodOf(d), d.allReduceBytes / 2, d.allReduceBytes / 2};
  if (d.sfb) {
    t.bytesSent = sfbSentBytes(d.shape, batches_, comm_.rank());
    t.bytesReceived = sfbReceivedBytes(d.shape, batches_, comm_.rank());
  }
  stats.bytesSent += t.bytesSent;
  stats.bytesReceived += t.bytesReceived;
  stats.layers.push_back(std::move(t));
  // Gloo's all-gather is a ring of P-1 hops; an all-reduce layer is a ring all-reduce.
  const int world = comm_.size();
  stats.phases += d.sfb ? std::max(0, world - 1) : ringAllReducePhases(world);
}

SyncStats SufficientFactorSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                            const SyncContext& context) {
  Stopwatch watch;
  if (grads.size() != parameterCount_)
    throw RuntimeFailure(fmt::format("sufficient-factor sync built for {} parameters, given {} gradients",
                                     parameterCount_, grads.size()));
  if (context.batches != batches_ && std::none_of(layers_.begin(), layers_.end(), [](auto& l) { return l.started; }))
    decide(context.batches);
  if (batches_.empty()) throw RuntimeFailure("sufficient factors need every rank's batch (SyncContext::batches)");
  armed_ = false;
  // Layers no hook started (no overlap, or backward did not reach them) go now, in backward order.
  for (size_t l = layers_.size(); l-- > 0;)
    if (!layers_[l].started) start(l);
  std::vector<at::Tensor> restGrads;
  for (int i : restParams_) restGrads.push_back(grads[i]);
  SyncStats stats = rest_->synchronize(restGrads, scalars, context);
  for (size_t l = layers_.size(); l-- > 0;) finish(l, grads);
  for (size_t l = 0; l < layers_.size(); ++l) addTraffic(l, stats);
  stats.elapsedMs = watch.elapsedMs();
  return stats;
}

std::string SufficientFactorSync::explain() const {
  std::string out =
      fmt::format("{} for {} fully connected layer(s), bytes per rank and step (sent + received):\n",
                  options_.hybrid ? "hybrid: all-reduce or sufficient factors by bytes" : "sufficient factors (sfb)",
                  layers_.size());
  out += batches_.empty() ? "  (decided at the first step, from its split)\n" : decisionTable(decisions_, batches_);
  return out + "other parameters: " + (restParams_.empty() ? std::string("none\n") : rest_->explain());
}

}  // namespace balancenet::comm

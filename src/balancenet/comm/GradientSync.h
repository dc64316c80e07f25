// GradientSync: the one interface every way of synchronising gradients sits behind.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json_fwd.hpp>

namespace torch::nn {
class Module;
}
namespace balancenet {
class Timeline;
}

namespace balancenet::comm {

// A model parameter with its module path ("layers.3.weight"); strategies that act during backward
// (hooks) or per layer are built over the model's list, in net.parameters() order.
struct NamedParameter {
  std::string name;
  at::Tensor tensor;
};
using ParameterList = std::vector<NamedParameter>;
ParameterList namedParameters(const torch::nn::Module& module);  // in module.parameters() order

// "layers.3.weight" -> "layers.3": the unit per-layer accounting and per-layer decisions work in.
std::string layerOf(const std::string& parameterName);

// One float buffer holding `grads` then `scalars`, end to end: what strategies that move every gradient in
// one message send. packGradients (re)allocates `buffer` when its size does not fit, then fills it;
// unpackGradients copies it back into the tensors.
void packGradients(const std::vector<at::Tensor>& grads, const at::Tensor& scalars, at::Tensor& buffer);
void unpackGradients(const at::Tensor& buffer, const std::vector<at::Tensor>& grads, at::Tensor& scalars);

// What each rank sends (and receives) for a ring all-reduce of `payloadBytes`: 2(P-1)/P of it. All
// strategies count bytes on the wire this way, so their byte columns compare.
int64_t ringAllReduceWireBytes(int64_t payloadBytes, int worldSize);
// Dependent communication phases of one ring all-reduce at `worldSize` ranks (reduce-scatter then
// all-gather, P-1 hops each): each is a wait that can land on a peer stalled by its CPU quota.
inline int64_t ringAllReducePhases(int worldSize) { return worldSize <= 1 ? 0 : 2 * int64_t(worldSize - 1); }

// Bytes one layer's synchronisation moved on this rank in one step.
struct LayerTraffic {
  std::string layer;
  std::string method;  // "allreduce", "sfb", "ps"
  int64_t bytesSent = 0;
  int64_t bytesReceived = 0;
};

// The per-layer breakdown of a strategy that moves every parameter the same way each step:
// `wireBytes(payload bytes of one parameter)` is what that parameter costs each way.
std::vector<LayerTraffic> trafficByLayer(const ParameterList& params, const std::string& method,
                                         const std::function<int64_t(int64_t)>& wireBytes);
// The same where a parameter's cost depends on more than its bytes (PowerSGD's on its shape).
std::vector<LayerTraffic> trafficByParameter(const ParameterList& params, const std::string& method,
                                             const std::function<int64_t(const NamedParameter&)>& wireBytes);

// Per-layer traffic that is the same step after step, worked out again only when the step's bytes change (an
// exchange's --compress-warmup ending), not in every step's synchronize().
class LayerTrafficCache {
 public:
  const std::vector<LayerTraffic>& get(int64_t stepWireBytes,
                                       const std::function<std::vector<LayerTraffic>()>& compute) {
    if (stepWireBytes != wire_) {
      traffic_ = compute();
      wire_ = stepWireBytes;
    }
    return traffic_;
  }

 private:
  int64_t wire_ = -1;
  std::vector<LayerTraffic> traffic_;
};

struct SyncStats {
  double elapsedMs = 0;                // wall time inside synchronize(), waiting for slower peers included
  int64_t bytesSent = 0;               // payload this rank put on the wire (per message, not per hop)
  int64_t bytesReceived = 0;           // payload this rank took off the wire
  double emulatedComputeMs = 0;        // part of elapsedMs that a wrapper spent emulating slower compute
  std::vector<LayerTraffic> layers{};  // optional per-layer breakdown of the two byte counts
  int64_t phases = 0;                  // dependent communication phases this rank waited on in the step
  // Part of elapsedMs this rank spent on its own work that the others wait for, not waiting itself (a hand-over's
  // pack, unpack and send: OffloadSync); the balanced policy counts it as a fixed cost of the rank's step.
  double ownMs = 0;
  // Part of ownMs a peer spent serving the offloaded clients that handed it a gradient (adding them, waiting for the
  // last step's sums to leave), and how many those were: what one hand-over costs the exchange (the balanced policy's
  // leave-out weighs it against the client's samples). A left-out client, which sends nothing, is not counted.
  double servingMs = 0;
  int64_t clientsServed = 0;
};

// What a strategy may want to know about the step it synchronises (cost models, emulation).
struct SyncContext {
  int64_t step = 0;
  int64_t localBatch = 0;          // this rank's samples in the step
  double computeMs = 0;            // this rank's real forward+backward time (0 in beginStep)
  std::vector<int64_t> batches{};  // every rank's samples in the step (the split); may be empty in tests
  double lr = 0;                   // the learning rate of the step (servers that update parameters need it)
  Timeline* timeline = nullptr;    // where strategies record their events; null: not recorded
  int64_t scalars = 1;             // numel of synchronize()'s `scalars`, known at beginStep (receives posted early)
  // False where hooks must not send during backward: backward runs once per micro-step, or the trainer reads this
  // rank's own gradient first (the noise scale). beginStep still comes before forward, so receives go up early.
  bool overlap = true;
  int64_t probeSamples = 0;  // with localBatch 0 (left out of the exchange): the samples its probe computed
};

// Contract: on entry to synchronize() each rank's gradients are its share of the global-batch
// gradient, i.e. the gradient of (sum of its per-sample losses) / B; on return every rank holds the
// sum over ranks, which is then exactly the gradient of the whole global batch, whatever the split.
// `scalars` (float32, 1-D) are summed alongside, so per-step totals (weighted loss) travel with them.
// A step is beginStep() before forward, then backward, then synchronize(): strategies that overlap
// with backward (hooks) may start sending between the two where context.overlap allows.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual void beginStep(const SyncContext& /*context*/) {}
  virtual SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                const SyncContext& context) = 0;
  // True when synchronize() already leaves the updated parameters in place (parameter servers
  // apply the optimiser): the trainer then skips its own optimiser step.
  virtual bool updatesParameters() const { return false; }
  // One line per layer saying how it is synchronised and why (--explain-comm); empty: nothing to say.
  virtual std::string explain() const { return {}; }
  // What the strategy decided during the run, added to summary.json's extras (auto: its trials); by default
  // nothing. Wrappers pass it on.
  virtual void describe(nlohmann::json& /*extra*/) const {}
  // This rank's own state that a resumed run needs to go on bit for bit (--grad-compress's error feedback, PowerSGD's
  // Q), as tensors of a layout fixed at construction; empty: none (the default). Checkpoints keep it per rank.
  virtual std::vector<at::Tensor> saveState() const { return {}; }
  // Continues from a saveState() of this strategy; false, changing nothing, when `state` does not have this
  // strategy's layout (a checkpoint of another exchange: the state then starts afresh).
  virtual bool loadState(const std::vector<at::Tensor>& state) { return state.empty(); }
};

// Whether `state` has the tensors of `current` (count, shapes, types): a saved state fits a strategy.
bool sameLayout(const std::vector<at::Tensor>& current, const std::vector<at::Tensor>& state);
// A state made of parts' states end to end (a bucketed sync's buckets, auto's candidates), and `state` cut back into
// pieces the size of `parts`' (their current states): nothing when it does not have their layout.
std::vector<at::Tensor> joinStates(const std::vector<std::vector<at::Tensor>>& parts);
std::optional<std::vector<std::vector<at::Tensor>>> splitState(const std::vector<std::vector<at::Tensor>>& parts,
                                                               const std::vector<at::Tensor>& state);

}  // namespace balancenet::comm

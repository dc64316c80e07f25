// GradientSync: the one interface every way of synchronising gradients sits behind.
#pragma once
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::comm {

struct SyncStats {
  double elapsedMs = 0;          // wall time inside synchronize(), waiting for slower peers included
  int64_t bytesSent = 0;         // payload this rank contributed (per message, not per hop)
  double emulatedComputeMs = 0;  // part of elapsedMs that a wrapper spent emulating slower compute
};

// What a strategy may want to know about the step it synchronises (cost models, emulation).
struct SyncContext {
  int64_t step = 0;
  int64_t localBatch = 0;  // this rank's samples in the step
  double computeMs = 0;    // this rank's real forward+backward time
};

// Contract: on entry each rank's gradients are its share of the global-batch gradient, i.e. the gradient
// of (sum of its per-sample losses) / B; on return every rank holds the sum over ranks, which is then
// exactly the gradient of the whole global batch, whatever the split. `scalars` (float32, 1-D) are
// summed alongside, so per-step totals (weighted loss, sample counts) travel in the same message.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                const SyncContext& context) = 0;
};

}  // namespace balancenet::comm

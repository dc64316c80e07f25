// ErrorFeedback: what a cast to the wire type lost, carried into the next step (Seide et al.'s 1-bit SGD, the
// residual of PowerSGD's and DeepSpeed's compressors): each step sends cast(g + e) and keeps e = g + e - sent, so
// over any run the sum of what was sent is the sum of the gradients less the last residual, which stays below one
// rounding of the wire type. One per buffer that travels compressed (a bucket, the flat gradient).
#pragma once
#include <ATen/core/Tensor.h>

#include "balancenet/compression/GradCompression.h"

namespace balancenet::compression {

class ErrorFeedback {
 public:
  // `keep` false: the residual stays zero (--no-error-feedback: what each cast loses is lost).
  explicit ErrorFeedback(GradCompression compression, bool keep = true) : compression_(compression), keep_(keep) {}
  // `values` (float32, contiguous) plus the residual, cast to the wire type; the residual becomes what the cast
  // lost. A buffer of another size than the last one's starts from a zero residual.
  at::Tensor encode(const at::Tensor& values);
  const at::Tensor& residual() const { return residual_; }
  // Continues from a saved residual (copied, onto `residual`'s device): a resumed run's next encode adds it.
  void restore(const at::Tensor& residual) {
    residual_ = residual.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  }

 private:
  GradCompression compression_;
  bool keep_ = true;
  at::Tensor residual_;  // float32, the size of the last buffer encoded
};

}  // namespace balancenet::compression

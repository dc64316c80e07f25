#include "balancenet/compression/ErrorFeedback.h"

#include <ATen/ATen.h>

namespace balancenet::compression {

at::Tensor ErrorFeedback::encode(const at::Tensor& values) {
  if (!residual_.defined() || residual_.numel() != values.numel() || residual_.device() != values.device())
    residual_ = at::zeros_like(values);
  if (!keep_) return values.to(wireType(compression_));
  const at::Tensor compensated = values + residual_;
  at::Tensor sent = compensated.to(wireType(compression_));
  at::sub_out(residual_, compensated, sent.to(at::kFloat));
  // An fp16 overflow (a step the loss scaler skips) would leave inf - inf = NaN here for every later step.
  residual_.nan_to_num_(0.0, 0.0, 0.0);
  return sent;
}

}  // namespace balancenet::compression

#include "balancenet/compression/Int8Quantizer.h"

#include <cmath>

#include <ATen/ATen.h>

namespace balancenet::compression {

float quantizeInt8(const at::Tensor& values, const at::Tensor& codes) {
  const float largest = values.numel() == 0 ? 0.0f : values.abs().max().item<float>();
  const float scale = largest / 127.0f;
  if (scale == 0.0f || !std::isfinite(scale)) {
    // Zeros send zeros. A non-finite gradient (fp16's overflow) sends its non-finite scale: zero codes times it
    // are NaN on arrival, so the loss scaler sees the overflow in the sum and skips the step, as uncompressed.
    codes.zero_();
    return scale;
  }
  codes.copy_(at::round(values / scale).clamp_(-127, 127));
  return scale;
}

void dequantizeInt8(const at::Tensor& codes, float scale, const at::Tensor& out) {
  at::Tensor target = out;  // a handle: the _out kernels take it by non-const reference
  at::mul_out(target, codes.to(at::kFloat), scale);
}

float quantizeInt8WithFeedback(const at::Tensor& values, const at::Tensor& residual, const at::Tensor& codes) {
  const at::Tensor compensated = values + residual;
  const float scale = quantizeInt8(compensated, codes);
  if (!std::isfinite(scale)) {  // a skipped step: nothing kept of it, or NaN would stay in every later step
    residual.zero_();
    return scale;
  }
  dequantizeInt8(codes, scale, residual);
  residual.neg_().add_(compensated);  // compensated - sent
  return scale;
}

}  // namespace balancenet::compression

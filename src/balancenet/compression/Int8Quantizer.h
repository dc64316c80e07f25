// Int8Quantizer: 8-bit codes with one float scale per chunk (the low-bit idea of the book's bottleneck chapter, as
// in 1-bit SGD and DeepSpeed's compressed all-reduce, at 8 bits so that one scale per chunk keeps it within half a
// step of 1/127 of the chunk's largest magnitude). Codes are round(v / scale) with scale = max|v| / 127, so every
// value is within scale / 2 of what was sent; an all-zero chunk has scale 0 and zero codes.
#pragma once
#include <ATen/core/Tensor.h>

namespace balancenet::compression {

// Writes the codes of `values` (float32) into `codes` (int8, same numel) and returns the chunk's scale.
float quantizeInt8(const at::Tensor& values, const at::Tensor& codes);
// codes * scale into `out` (float32, same numel).
void dequantizeInt8(const at::Tensor& codes, float scale, const at::Tensor& out);

// The same with error feedback: `values` plus `residual` quantised, and `residual` becomes what the codes lost
// (both float32, same numel). Returns the scale.
float quantizeInt8WithFeedback(const at::Tensor& values, const at::Tensor& residual, const at::Tensor& codes);

}  // namespace balancenet::compression

// GradientClipping: --clip-grad-norm, the gradient scaled down to a maximum global L2 norm.
#pragma once
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::trainer {

// The factor torch.nn.utils.clip_grad_norm_ applies: maxNorm / (norm + 1e-6) when norm > maxNorm, else 1.
double clipFactor(double norm, double maxNorm);

// Sum of squares over every gradient (the squared global L2 norm, or a stage's part of it).
double squaredNorm(const std::vector<at::Tensor>& grads);

// Scales the gradients in place by clipFactor(sqrt(squaredTotal), maxNorm); squaredTotal defaults to
// these gradients' own (a pipeline stage passes the sum over all stages). Returns the norm before.
double clipGradients(const std::vector<at::Tensor>& grads, double maxNorm, double squaredTotal = -1);

}  // namespace balancenet::trainer

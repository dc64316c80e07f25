// GradientClipping: the global norm and the in-place scaling.
#include "balancenet/trainer/GradientClipping.h"

#include <ATen/ATen.h>

#include <cmath>

namespace balancenet::trainer {

double clipFactor(double norm, double maxNorm) { return norm > maxNorm ? maxNorm / (norm + 1e-6) : 1.0; }

double squaredNorm(const std::vector<at::Tensor>& grads) {
  double total = 0;  // in double: many float32 squares
  for (const auto& g : grads)
    if (g.defined()) total += g.to(at::kDouble).pow(2).sum().item<double>();
  return total;
}

double clipGradients(const std::vector<at::Tensor>& grads, double maxNorm, double squaredTotal) {
  const double norm = std::sqrt(squaredTotal < 0 ? squaredNorm(grads) : squaredTotal);
  const double factor = clipFactor(norm, maxNorm);
  if (factor < 1) {
    at::NoGradGuard noGrad;
    for (const auto& g : grads)
      if (g.defined()) g.mul_(factor);
  }
  return norm;
}

}  // namespace balancenet::trainer

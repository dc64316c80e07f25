// FactorLinear: forward of nn::Linear plus a hook on its output that hands (v, u) to the listener.
#include "balancenet/comm/FactorLinear.h"

#include <ATen/ATen.h>

namespace balancenet::comm {

FactorLinearImpl::FactorLinearImpl(int64_t inFeatures, int64_t outFeatures)
    : torch::nn::LinearImpl(torch::nn::LinearOptions(inFeatures, outFeatures)) {}

at::Tensor FactorLinearImpl::forward(const at::Tensor& input) {
  at::Tensor output = torch::nn::LinearImpl::forward(input);
  // Evaluation (no grad) has no backward, hence nothing to capture.
  if (output.requires_grad()) {
    at::Tensor v = input.detach();
    output.register_hook([this, v](const at::Tensor& u) { onOutputGrad(v, u); });
  }
  return output;
}

void FactorLinearImpl::onOutputGrad(const at::Tensor& v, const at::Tensor& u) {
  v_ = v;
  u_ = u.detach();
  if (listener_) listener_(v_, u_);
}

std::function<torch::nn::AnyModule(int64_t, int64_t)> factorLinearFactory() {
  return [](int64_t in, int64_t out) { return torch::nn::AnyModule(FactorLinear(in, out)); };
}

}  // namespace balancenet::comm

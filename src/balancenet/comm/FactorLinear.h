// FactorLinear: a torch::nn::Linear that also captures its sufficient factors (input v, output gradient u).
#pragma once
#include <cstdint>
#include <functional>

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace balancenet::comm {

// The weight gradient of a fully connected layer over a batch is U^T V (U: dLoss/dOutput [K,M], V: the
// input [K,N]), so a strategy can send U and V instead of the M x N gradient (Poseidon's SFB).
// Deriving from LinearImpl keeps the parameter names (weight, bias), their initialisation and the values
// of forward and backward exactly those of torch::nn::Linear.
class FactorLinearImpl : public torch::nn::LinearImpl {
 public:
  // Called during backward, once u of a forward is known: (v [K,N], u [K,M]), both without autograd.
  using Listener = std::function<void(const at::Tensor& v, const at::Tensor& u)>;

  FactorLinearImpl(int64_t inFeatures, int64_t outFeatures);
  at::Tensor forward(const at::Tensor& input);

  // One listener per layer (the strategy that owns the step); empty: factors are only kept.
  void setListener(Listener listener) { listener_ = std::move(listener); }
  // The factors of the last backward pass through this layer (undefined before one).
  const at::Tensor& input() const { return v_; }
  const at::Tensor& outputGrad() const { return u_; }

 private:
  void onOutputGrad(const at::Tensor& v, const at::Tensor& u);

  Listener listener_;
  at::Tensor v_;
  at::Tensor u_;
};
TORCH_MODULE(FactorLinear);

// A models::LinearFactory making FactorLinear layers (the type is spelled out so comm needs no models header).
std::function<torch::nn::AnyModule(int64_t, int64_t)> factorLinearFactory();

}  // namespace balancenet::comm

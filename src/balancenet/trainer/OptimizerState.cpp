// A parameter's optimiser state out of and into libtorch's per-optimiser state map. libtorch 2.x keys that map
// by the parameter's TensorImpl address (a void*), so a parameter refilled in place (set_data) keeps its key,
// and one optimiser's state can be read for another.
#include "balancenet/trainer/OptimizerState.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "balancenet/core/Error.h"

namespace balancenet::trainer {
namespace {

void* keyOf(const at::Tensor& parameter) { return parameter.unsafeGetTensorImpl(); }

bool holds(const torch::optim::Optimizer& optimizer, const at::Tensor& parameter) {
  for (const auto& group : optimizer.param_groups())
    for (const auto& p : group.params())
      if (p.unsafeGetTensorImpl() == parameter.unsafeGetTensorImpl()) return true;
  return false;
}

// A copy: the state must not alias the tensors the optimiser goes on updating in place.
at::Tensor copied(const at::Tensor& t) { return t.detach().clone(); }

// Adam's and AdamW's states have the same fields: step, the two moments, the AMSGrad maximum.
template <typename State>
std::vector<at::Tensor> adamState(const torch::optim::OptimizerParamState& base) {
  const auto& s = static_cast<const State&>(base);
  std::vector<at::Tensor> state{at::scalar_tensor(s.step(), at::kLong), copied(s.exp_avg()), copied(s.exp_avg_sq())};
  if (s.max_exp_avg_sq().defined()) state.push_back(copied(s.max_exp_avg_sq()));
  return state;
}

template <typename State>
std::unique_ptr<State> adamStateFrom(const std::vector<at::Tensor>& state) {
  if (state.size() != 3 && state.size() != 4)
    throw InternalError("setParameterState: Adam keeps 3 or 4 tensors per parameter");
  auto s = std::make_unique<State>();
  s->step(state[0].item<int64_t>());
  s->exp_avg(copied(state[1]));
  s->exp_avg_sq(copied(state[2]));
  if (state.size() == 4) s->max_exp_avg_sq(copied(state[3]));
  return s;
}

}  // namespace

std::vector<at::Tensor> parameterState(torch::optim::Optimizer& optimizer, const at::Tensor& parameter) {
  const bool sgd = dynamic_cast<torch::optim::SGD*>(&optimizer) != nullptr;
  const bool adam = dynamic_cast<torch::optim::Adam*>(&optimizer) != nullptr;
  const bool adamw = dynamic_cast<torch::optim::AdamW*>(&optimizer) != nullptr;
  if (!sgd && !adam && !adamw) throw InternalError("parameterState: an optimiser that is not SGD, Adam or AdamW");
  const auto found = optimizer.state().find(keyOf(parameter));
  if (found == optimizer.state().end()) return {};
  if (sgd) {
    const auto& s = static_cast<const torch::optim::SGDParamState&>(*found->second);
    if (!s.momentum_buffer().defined()) return {};
    return {copied(s.momentum_buffer())};
  }
  return adam ? adamState<torch::optim::AdamParamState>(*found->second)
              : adamState<torch::optim::AdamWParamState>(*found->second);
}

void setParameterState(torch::optim::Optimizer& optimizer, const at::Tensor& parameter,
                       const std::vector<at::Tensor>& state) {
  if (!holds(optimizer, parameter)) throw InternalError("setParameterState: a parameter the optimiser does not hold");
  void* const key = keyOf(parameter);
  if (state.empty()) {
    optimizer.state().erase(key);
    return;
  }
  if (dynamic_cast<torch::optim::SGD*>(&optimizer)) {
    if (state.size() != 1) throw InternalError("setParameterState: SGD keeps one tensor per parameter");
    auto s = std::make_unique<torch::optim::SGDParamState>();
    s->momentum_buffer(copied(state[0]));
    optimizer.state()[key] = std::move(s);
    return;
  }
  if (dynamic_cast<torch::optim::Adam*>(&optimizer)) {
    optimizer.state()[key] = adamStateFrom<torch::optim::AdamParamState>(state);
    return;
  }
  if (dynamic_cast<torch::optim::AdamW*>(&optimizer)) {
    optimizer.state()[key] = adamStateFrom<torch::optim::AdamWParamState>(state);
    return;
  }
  throw InternalError("setParameterState: an optimiser that is not SGD, Adam or AdamW");
}

}  // namespace balancenet::trainer

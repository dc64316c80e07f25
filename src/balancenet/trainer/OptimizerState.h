// OptimizerState: one parameter's optimiser state as plain tensors, so that the parameter can move to
// another process (a pipeline re-partition) and go on exactly as if it had stayed.
#pragma once
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

namespace balancenet::trainer {

// The state `optimizer` keeps for `parameter` (sgd: the momentum buffer; adam: the step count as a long
// scalar, exp_avg, exp_avg_sq and, with amsgrad, max_exp_avg_sq), in a fixed order; empty when it keeps
// none yet (before the first step). Throws InternalError for an optimiser type it does not know.
std::vector<at::Tensor> parameterState(torch::optim::Optimizer& optimizer, const at::Tensor& parameter);
// Installs `state` (parameterState's output, from an optimiser of the same type and options) for
// `parameter`, which must be one of `optimizer`'s; empty `state`: none.
void setParameterState(torch::optim::Optimizer& optimizer, const at::Tensor& parameter,
                       const std::vector<at::Tensor>& state);

}  // namespace balancenet::trainer

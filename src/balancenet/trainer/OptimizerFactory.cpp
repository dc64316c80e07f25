// SGD (momentum, weight decay, Nesterov) and Adam from torch::optim.
#include "balancenet/trainer/OptimizerFactory.h"

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "balancenet/core/Error.h"

namespace balancenet::trainer {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerOptions& o,
                                                       const std::vector<at::Tensor>& parameters, double lr) {
  if (o.name == "sgd") {
    auto opts = torch::optim::SGDOptions(lr).momentum(o.momentum).weight_decay(o.weightDecay).nesterov(o.nesterov);
    return std::make_unique<torch::optim::SGD>(parameters, opts);
  }
  if (o.name == "adam") {
    auto opts = torch::optim::AdamOptions(lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(o.weightDecay);
    return std::make_unique<torch::optim::Adam>(parameters, opts);
  }
  throw UsageError("--optimizer must be sgd or adam; got '" + o.name + "'");
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace balancenet::trainer

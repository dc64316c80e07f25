// SGD (momentum, weight decay, Nesterov), Adam and AdamW from torch::optim.
#include "balancenet/trainer/OptimizerFactory.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
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
  if (o.name == "adamw") {  // decoupled weight decay (Loshchilov & Hutter), what transformers train with
    auto opts = torch::optim::AdamWOptions(lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(o.weightDecay);
    return std::make_unique<torch::optim::AdamW>(parameters, opts);
  }
  throw UsageError("--optimizer must be sgd, adam or adamw; got '" + o.name + "'");
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace balancenet::trainer

// OptimizerFactory: builds the optimiser named on the command line and sets its learning rate each step.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>
#include "balancenet/core/FieldList.h"

namespace balancenet::trainer {

struct OptimizerOptions {
  std::string name = "sgd";  // sgd | adam
  double momentum = 0.9;     // sgd
  double weightDecay = 0;
  bool nesterov = false;                          // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(name, momentum, weightDecay, nesterov, beta1, beta2, eps);
};
BALANCENET_CHECK_FIELDS(OptimizerOptions);

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerOptions& options,
                                                       const std::vector<at::Tensor>& parameters, double lr);
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace balancenet::trainer

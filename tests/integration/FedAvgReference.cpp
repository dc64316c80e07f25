// One step of synchronous data parallelism as the FedAvg exactness tests' reference (see FedAvgReference.h).
#include "FedAvgReference.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "balancenet/federated/process/ModelWeights.h"

namespace balancenet::testing {

std::vector<at::Tensor> dataParallelStep(models::Network& net, const at::Tensor& start,
                                         const std::vector<ReferenceClient>& clients, double lr) {
  auto params = net.parameters();
  std::vector<at::Tensor> meanGrad;
  for (const auto& p : params) meanGrad.push_back(at::zeros_like(p));
  for (const auto& c : clients) {
    federated::loadFlatWeights(net, start);
    net.train();
    net.zero_grad();
    const data::Batch b = c.data->batch(c.batch);
    at::cross_entropy_loss(net.forward(b.inputs), b.targets).backward();
    for (size_t i = 0; i < params.size(); ++i) meanGrad[i] += c.weight * params[i].grad();
  }
  federated::loadFlatWeights(net, start);
  std::vector<at::Tensor> stepped;
  for (size_t i = 0; i < params.size(); ++i) stepped.push_back(params[i].detach() - lr * meanGrad[i]);
  return stepped;
}

double maxDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

}  // namespace balancenet::testing

// FedAvgStrategy (McMahan et al. 2017): a --fraction sample of the clients runs the same (or drawn) local
// steps; the server keeps only complete work and averages the deltas weighted by shard size.
#pragma once
#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

class FedAvgStrategy : public Strategy {
 public:
  explicit FedAvgStrategy(const FederatedOptions& options) : FedAvgStrategy(options, 0) {}
  std::string name() const override { return "fedavg"; }
  std::vector<ClientTask> configure(const RoundContext& context) override;
  // global + serverLr x sum_i p_i delta_i, p_i = shardSamples_i / sum over the accepted updates.
  at::Tensor aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates, int64_t version) override;

 protected:
  // mu: the proximal weight the tasks carry (FedProx's; 0 here).
  FedAvgStrategy(const FederatedOptions& options, double mu) : options_(options), mu_(mu) {}

 private:
  FederatedOptions options_;
  double mu_;
};

}  // namespace balancenet::federated

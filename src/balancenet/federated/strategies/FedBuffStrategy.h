// FedBuffStrategy (Nguyen et al. 2022): asynchronous. Every idle client gets work at once; the server steps
// after every K (--buffer) accepted updates, down-weighting stale ones by 1/sqrt(1 + staleness).
#pragma once
#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

class FedBuffStrategy : public Strategy {
 public:
  explicit FedBuffStrategy(const FederatedOptions& options) : options_(options) {}
  std::string name() const override { return "fedbuff"; }
  // Every available client, with the local steps drawn for (context.round = the model version, client).
  std::vector<ClientTask> configure(const RoundContext& context) override;
  // global + serverLr x (1/K) sum_i s(version - baseVersion_i) delta_i, K = updates.size(), s = stalenessWeight.
  at::Tensor aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates, int64_t version) override;
  bool asynchronous() const override { return true; }
  int bufferSize() const override { return options_.bufferSize; }

 private:
  FederatedOptions options_;
};

}  // namespace balancenet::federated

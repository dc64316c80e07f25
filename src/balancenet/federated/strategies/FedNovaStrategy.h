// FedNovaStrategy (Wang et al. 2020): clients run plain local SGD for their (possibly drawn, possibly cut
// short) local steps; the server normalises each delta by its step count, so unequal local work does not bias
// the objective towards the clients that did more (Aggregation.h, fedNovaAggregate).
#pragma once
#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

class FedNovaStrategy : public Strategy {
 public:
  explicit FedNovaStrategy(const FederatedOptions& options) : options_(options) {}
  std::string name() const override { return "fednova"; }
  std::vector<ClientTask> configure(const RoundContext& context) override;
  // Partial work counts: the normalisation weighs it by the steps actually done.
  bool accepts(const ClientUpdate& update) const override { return update.doneSteps > 0; }
  at::Tensor aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates, int64_t version) override;

 protected:
  const FederatedOptions& options() const { return options_; }

 private:
  FederatedOptions options_;
};

}  // namespace balancenet::federated

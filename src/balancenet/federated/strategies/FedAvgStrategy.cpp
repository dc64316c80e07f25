// FedAvgStrategy: sampled rounds, shard-weighted average of complete updates.
#include "balancenet/federated/strategies/FedAvgStrategy.h"

#include "balancenet/federated/strategies/Aggregation.h"
#include "balancenet/federated/strategies/ClientSampling.h"

namespace balancenet::federated {

std::vector<ClientTask> FedAvgStrategy::configure(const RoundContext& context) {
  return drawnStepTasks(sampleClients(context, options_.fraction, options_.seed), context.round, options_, mu_);
}

at::Tensor FedAvgStrategy::aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                                     int64_t /*version*/) {
  auto weights = sampleWeights(updates);
  for (auto& w : weights) w *= options_.serverLr;
  return combineDeltas(global, updates, weights, {}, options_.trimBeta);
}

}  // namespace balancenet::federated

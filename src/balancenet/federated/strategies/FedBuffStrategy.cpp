// FedBuffStrategy: work for every idle client, staleness-weighted buffered aggregation.
#include "balancenet/federated/strategies/FedBuffStrategy.h"

#include "balancenet/federated/strategies/Aggregation.h"
#include "balancenet/federated/strategies/ClientSampling.h"

namespace balancenet::federated {

std::vector<ClientTask> FedBuffStrategy::configure(const RoundContext& context) {
  return drawnStepTasks(availableClients(context), context.round, options_, 0);
}

at::Tensor FedBuffStrategy::aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                                      int64_t version) {
  std::vector<double> weights;
  for (const auto& u : updates)
    weights.push_back(options_.serverLr * stalenessWeight(version - u.baseVersion) / double(updates.size()));
  return combineDeltas(global, updates, weights, {}, options_.trimBeta);
}

}  // namespace balancenet::federated

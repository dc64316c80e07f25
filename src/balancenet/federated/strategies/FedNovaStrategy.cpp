// FedNovaStrategy: sampled rounds with drawn local steps, normalised aggregation.
#include "balancenet/federated/strategies/FedNovaStrategy.h"

#include "balancenet/federated/strategies/Aggregation.h"
#include "balancenet/federated/strategies/ClientSampling.h"

namespace balancenet::federated {

std::vector<ClientTask> FedNovaStrategy::configure(const RoundContext& context) {
  return drawnStepTasks(sampleClients(context, options_.fraction, options_.seed), context.round, options_, 0);
}

at::Tensor FedNovaStrategy::aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                                      int64_t /*version*/) {
  return fedNovaAggregate(global, updates, options_);
}

}  // namespace balancenet::federated

// BalancedStrategy: speed-proportional quotas, FedNova's aggregation (inherited).
#include "balancenet/federated/strategies/BalancedStrategy.h"

#include "balancenet/federated/strategies/ClientSampling.h"
#include "balancenet/federated/strategies/QuotaPlanner.h"

namespace balancenet::federated {

std::vector<ClientTask> BalancedStrategy::configure(const RoundContext& context) {
  const auto clients = sampleClients(context, options().fraction, options().seed);
  std::vector<double> speeds;
  for (int c : clients) speeds.push_back(context.clients.at(static_cast<size_t>(c)).samplesPerSecond);
  const auto plan = planQuotas(speeds, options().localSteps, options().localBatch, options().deadlineS);
  std::vector<ClientTask> tasks;
  for (size_t i = 0; i < clients.size(); ++i)
    tasks.push_back({clients[i], plan.steps[i], plan.batches[i], kBalancedDeadlineMargin * plan.roundSeconds, 0});
  return tasks;
}

}  // namespace balancenet::federated

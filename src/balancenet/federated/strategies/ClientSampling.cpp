// ClientSampling: seeded per-round client samples and local-step draws.
#include "balancenet/federated/strategies/ClientSampling.h"

#include <algorithm>
#include <cmath>

#include "balancenet/core/PortableRandom.h"

namespace balancenet::federated {

namespace {

// Keeps the sampling and step draws of a seed apart from each other and from the label partition's.
constexpr uint64_t kSampleSalt = 0x5a3b'0000'0000'0000ULL;
constexpr uint64_t kStepsSalt = 0x57e9'0000'0000'0000ULL;

std::mt19937_64 generatorFor(uint64_t seed, uint64_t purpose, int64_t round, int client) {
  return seededGenerator(seed, purpose ^ splitmix64(splitmix64(static_cast<uint64_t>(round)) + uint64_t(client)));
}

}  // namespace

std::vector<int> availableClients(const RoundContext& context) {
  std::vector<int> ids;
  for (const auto& c : context.clients)
    if (c.available) ids.push_back(c.client);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<int> sampleClients(const RoundContext& context, double fraction, uint64_t seed) {
  auto ids = availableClients(context);
  if (ids.empty()) return ids;
  const auto wanted = std::clamp<size_t>(size_t(std::llround(fraction * double(ids.size()))), 1, ids.size());
  // Partial Fisher-Yates: the first `wanted` places end up a uniform sample without replacement.
  auto gen = generatorFor(seed, kSampleSalt, context.round, -1);
  for (size_t i = 0; i < wanted; ++i) std::swap(ids[i], ids[i + boundedDraw(gen, ids.size() - i)]);
  ids.resize(wanted);
  std::sort(ids.begin(), ids.end());
  return ids;
}

int64_t drawLocalSteps(const LocalSteps& steps, uint64_t seed, int64_t round, int client) {
  if (!steps.drawn()) return steps.low;
  auto gen = generatorFor(seed, kStepsSalt, round, client);
  return steps.low + static_cast<int64_t>(boundedDraw(gen, static_cast<uint64_t>(steps.high - steps.low) + 1));
}

std::vector<ClientTask> drawnStepTasks(const std::vector<int>& clients, int64_t round, const FederatedOptions& options,
                                       double mu) {
  std::vector<ClientTask> tasks;
  for (int c : clients)
    tasks.push_back({c, drawLocalSteps(options.localSteps, options.seed, round, c), 0, options.deadlineS, mu});
  return tasks;
}

}  // namespace balancenet::federated

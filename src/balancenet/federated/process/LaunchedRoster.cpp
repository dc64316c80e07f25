// The launched clients' roster (see LaunchedRoster.h).
#include "balancenet/federated/process/LaunchedRoster.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/federated/LabelPartition.h"
#include "balancenet/federated/process/FederatedClient.h"
#include "balancenet/federated/process/HeldOutSplit.h"

namespace balancenet::federated {

LaunchedRoster::LaunchedRoster(c10::intrusive_ptr<c10d::Store> store, const ProcessSettings& settings)
    : store_(std::move(store)), s_(settings) {}

std::vector<Arrival> LaunchedRoster::first(const RosterStart& start) {
  const auto& o = s_.options;
  const ShardLabels labels = shardLabels(start.train);
  const auto shards = dirichletShards(labels.labels, o.clients, o.alpha, o.seed, labels.classes);
  writePartitionCsv(s_.runDir + "/partition.csv", labelCounts(shards, labels.labels, labels.classes));
  std::vector<Arrival> out;
  for (int c = 0; c < o.clients; ++c) {
    auto channel = ClientChannel::acceptNewest(store_, c, 0, start.deadline, s_.channel);
    if (!channel)
      throw RuntimeFailure(fmt::format("client {} did not arrive within {:.0f} s (--rendezvous-timeout)", c,
                                       s_.joinTimeout.count() / 1000.0));
    generations_[c] = channel->generation();
    const auto size = static_cast<int64_t>(shards[c].size());  // what it trains on: less its held-out samples
    out.push_back({c, "", size - clientHeldOutCount(size, o.clientEvalFraction), std::move(channel)});
  }
  return out;
}

std::vector<Arrival> LaunchedRoster::arrivals(const std::vector<bool>& connected) {
  std::vector<Arrival> out;
  for (int c = 0; c < static_cast<int>(connected.size()); ++c) {
    if (connected[c]) continue;
    const int64_t g = ClientChannel::announcedGeneration(*store_, c);
    if (g <= generations_[c]) continue;
    auto channel = ClientChannel::acceptNewest(store_, c, generations_[c],
                                               std::chrono::steady_clock::now() + s_.joinTimeout, s_.channel);
    if (!channel) {  // died again before its channel formed: wait for the next generation
      spdlog::warn("client {} announced generation {} but its channel did not form", c, g);
      generations_[c] = g;
      continue;
    }
    generations_[c] = channel->generation();
    out.push_back({c, "", -1, std::move(channel)});  // -1: its shard is the one it had
  }
  return out;
}

}  // namespace balancenet::federated

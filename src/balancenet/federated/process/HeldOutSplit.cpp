// The held-out split of a client's shard.
#include "balancenet/federated/process/HeldOutSplit.h"

#include <algorithm>
#include <numeric>

#include "balancenet/core/PortableRandom.h"
#include "balancenet/data/HeldOut.h"

namespace balancenet::federated {
namespace {

// Apart from LocalBatches' streams (round x clients + client), which start at 0.
constexpr uint64_t kHeldOutSalt = 0x68656c646f7574ULL;  // "heldout"

}  // namespace

int64_t clientHeldOutCount(int64_t shardSize, double fraction) {
  if (shardSize <= 1) return 0;
  return std::min(data::heldOutCount(shardSize, fraction), shardSize - 1);
}

ShardSplit splitShard(int64_t shardSize, double fraction, uint64_t seed, int client) {
  std::vector<int64_t> order(static_cast<size_t>(shardSize));
  std::iota(order.begin(), order.end(), 0);
  const int64_t held = clientHeldOutCount(shardSize, fraction);
  if (held == 0) return {order, {}};
  auto gen = seededGenerator(seed ^ kHeldOutSalt, static_cast<uint64_t>(client));
  portableShuffle(order, gen);
  const auto cut = order.end() - held;
  ShardSplit split{{order.begin(), cut}, {cut, order.end()}};
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.heldOut.begin(), split.heldOut.end());
  return split;
}

ClientData splitClientData(const ClientShard& shard, double fraction, uint64_t seed, int client) {
  const ShardSplit split = splitShard(shard.size(), fraction, seed, client);
  if (split.heldOut.empty()) return {shard, std::nullopt};
  return {takeShard(shard.data, split.train), takeShard(shard.data, split.heldOut)};
}

}  // namespace balancenet::federated

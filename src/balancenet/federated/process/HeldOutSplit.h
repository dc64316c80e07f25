// HeldOutSplit: which samples of a client's shard it keeps back for federated evaluation (never trained on).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "balancenet/federated/process/LocalTraining.h"

namespace balancenet::federated {

// The held-out samples of a shard of `shardSize`: data::heldOutCount (round(n f), at least 1 when f > 0),
// but never the whole shard: at least one sample is left to train on. 0 when fraction is 0.
int64_t clientHeldOutCount(int64_t shardSize, double fraction);

// Shard positions, each part ascending. The held-out part is the last clientHeldOutCount positions of a
// permutation drawn from (seed, client), so it follows each client's label mix rather than the data's file
// order (some formats store a class after another). fraction 0: every position trains, in order.
struct ShardSplit {
  std::vector<int64_t> train;
  std::vector<int64_t> heldOut;
};
ShardSplit splitShard(int64_t shardSize, double fraction, uint64_t seed, int client);

// The client's data: what it trains on and, with a fraction above 0, what it evaluates on.
struct ClientData {
  ClientShard train;
  std::optional<ClientShard> heldOut;
};
ClientData splitClientData(const ClientShard& shard, double fraction, uint64_t seed, int client);

}  // namespace balancenet::federated

// ShardLayout: which part of the model each parameter server holds (a pure function, unit-tested).
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::ps {

// Elements [begin, end) of the flattened parameter vector (the tensors concatenated in model order).
struct ShardRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Contiguous ranges of equal size (the first total % servers get one element more). Equal ranges balance
// bytes exactly whatever the tensor sizes, where a greedy assignment of whole tensors cannot (one large
// fully connected weight holds most of a small CNN); the optimisers are elementwise, so a tensor cut
// between two servers trains exactly as a whole one. Throws UsageError when servers exceed the elements.
std::vector<ShardRange> layoutShards(int64_t totalElements, int servers);

// The part of one tensor that lies in one shard: tensor elements [tensorOffset, +length) are shard
// elements [shardOffset, +length).
struct ShardPiece {
  int tensor = 0;
  int64_t tensorOffset = 0;
  int64_t shardOffset = 0;
  int64_t length = 0;
};

// The pieces of a shard, in tensor order, for tensors of the given element counts.
std::vector<ShardPiece> piecesOf(const ShardRange& shard, const std::vector<int64_t>& tensorElements);

}  // namespace balancenet::ps

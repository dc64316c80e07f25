// Equal contiguous shards and the tensor pieces they cut.
#include "balancenet/ps/ShardLayout.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::ps {

std::vector<ShardRange> layoutShards(int64_t totalElements, int servers) {
  if (servers < 1) throw UsageError(fmt::format("need at least 1 parameter server, got {}", servers));
  if (totalElements < servers)
    throw UsageError(fmt::format("{} parameter servers for a model of {} parameters: each server needs at least one",
                                 servers, totalElements));
  std::vector<ShardRange> shards;
  int64_t begin = 0;
  for (int k = 0; k < servers; ++k) {
    const int64_t size = totalElements / servers + (k < totalElements % servers ? 1 : 0);
    shards.push_back({begin, begin + size});
    begin += size;
  }
  return shards;
}

std::vector<ShardPiece> piecesOf(const ShardRange& shard, const std::vector<int64_t>& tensorElements) {
  std::vector<ShardPiece> pieces;
  int64_t tensorBegin = 0;
  for (size_t i = 0; i < tensorElements.size(); ++i) {
    const int64_t tensorEnd = tensorBegin + tensorElements[i];
    const int64_t from = std::max(tensorBegin, shard.begin), to = std::min(tensorEnd, shard.end);
    if (from < to) pieces.push_back({static_cast<int>(i), from - tensorBegin, from - shard.begin, to - from});
    tensorBegin = tensorEnd;
  }
  return pieces;
}

}  // namespace balancenet::ps

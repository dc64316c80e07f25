// Shard layout: equal contiguous ranges cover every element once, and cut tensors into the right pieces.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/ps/ShardLayout.h"

namespace balancenet::ps {
namespace {

std::vector<std::vector<int64_t>> asRows(const std::vector<ShardRange>& shards) {
  std::vector<std::vector<int64_t>> rows;
  for (const auto& s : shards) rows.push_back({s.begin, s.end});
  return rows;
}

std::vector<std::vector<int64_t>> asRows(const std::vector<ShardPiece>& pieces) {
  std::vector<std::vector<int64_t>> rows;
  for (const auto& p : pieces) rows.push_back({p.tensor, p.tensorOffset, p.shardOffset, p.length});
  return rows;
}

TEST(ShardLayout, EqualRangesWithTheRemainderFirst) {
  EXPECT_EQ(asRows(layoutShards(10, 3)), (std::vector<std::vector<int64_t>>{{0, 4}, {4, 7}, {7, 10}}));
}

TEST(ShardLayout, BytesBalancedWhateverTheTensorSizes) {
  // One tensor holding nearly everything (a wide fully connected layer): whole-tensor assignment could
  // not balance it, equal ranges do.
  const std::vector<int64_t> tensors{10, 1000000, 10, 5};
  int64_t total = 0;
  for (auto t : tensors) total += t;
  for (int servers : {1, 2, 3, 7}) {
    const auto shards = layoutShards(total, servers);
    int64_t covered = 0, largest = 0, smallest = total;
    for (const auto& s : shards) {
      EXPECT_EQ(s.begin, covered);
      covered = s.end;
      largest = std::max(largest, s.size());
      smallest = std::min(smallest, s.size());
    }
    EXPECT_EQ(covered, total);
    EXPECT_LE(largest - smallest, 1) << servers << " servers";
  }
}

TEST(ShardLayout, PiecesCutTensorsAtShardBorders) {
  const std::vector<int64_t> tensors{3, 5, 2};  // elements [0,3) [3,8) [8,10)
  // {tensor, tensorOffset, shardOffset, length}
  EXPECT_EQ(asRows(piecesOf(ShardRange{2, 9}, tensors)),
            (std::vector<std::vector<int64_t>>{{0, 2, 0, 1}, {1, 0, 1, 5}, {2, 0, 6, 1}}));
}

TEST(ShardLayout, EveryElementInExactlyOnePiece) {
  const std::vector<int64_t> tensors{7, 1, 12, 4, 9};
  std::vector<int> seen(33, 0);
  for (const auto& shard : layoutShards(33, 4))
    for (const auto& p : piecesOf(shard, tensors)) {
      int64_t tensorBegin = 0;
      for (int i = 0; i < p.tensor; ++i) tensorBegin += tensors[i];
      EXPECT_EQ(tensorBegin + p.tensorOffset, shard.begin + p.shardOffset);
      for (int64_t e = 0; e < p.length; ++e) ++seen[tensorBegin + p.tensorOffset + e];
    }
  for (int count : seen) EXPECT_EQ(count, 1);
}

TEST(ShardLayout, MoreServersThanParametersIsAUsageError) {
  EXPECT_THROW(layoutShards(3, 4), UsageError);
  EXPECT_THROW(layoutShards(3, 0), UsageError);
}

}  // namespace
}  // namespace balancenet::ps

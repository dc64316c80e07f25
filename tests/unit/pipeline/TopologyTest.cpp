// Topology: pipelines as columns of consecutive ranks, replicas of a stage as rows, and --nodes against
// --pipeline-stages.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/Topology.h"
#include "testing/UsageErrors.h"

namespace balancenet::pipeline {
namespace {

using testing::usageErrorOf;

TEST(Topology, LaysOutColumnsOfConsecutiveRanks) {
  const auto t = Topology::of(8, 4);
  EXPECT_EQ(t.stages, 4);
  EXPECT_EQ(t.replicas, 2);
  EXPECT_EQ(t.worldSize(), 8);
  EXPECT_EQ(t.columnRanks(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(t.stageRanks(1), (std::vector<int>{1, 5}));
  for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(t.rankOf(t.stageOf(rank), t.replicaOf(rank)), rank);
  EXPECT_EQ(t.stageOf(6), 2);
  EXPECT_EQ(t.replicaOf(6), 1);
}

TEST(Topology, OneStageIsDataParallelismAndOneReplicaIsOnePipeline) {
  const auto dp = Topology::of(5, 1);
  EXPECT_EQ(dp.replicas, 5);
  EXPECT_EQ(dp.stageRanks(0), (std::vector<int>{0, 1, 2, 3, 4}));
  const auto pipe = Topology::of(4, 4);
  EXPECT_EQ(pipe.replicas, 1);
  EXPECT_EQ(pipe.stageRanks(3), (std::vector<int>{3}));
}

TEST(Topology, RefusesStageCountsThatDoNotDivideTheWorld) {
  EXPECT_EQ(usageErrorOf([] { Topology::of(6, 4); }), "--nodes 6 is not a multiple of --pipeline-stages 4");
  EXPECT_EQ(usageErrorOf([] { Topology::of(2, 4); }), "--nodes 2 is not a multiple of --pipeline-stages 4");
  EXPECT_EQ(usageErrorOf([] { Topology::of(4, 0); }), "--pipeline-stages must be at least 1; got 0");
  EXPECT_EQ(usageErrorOf([] { Topology::of(4, -2); }), "--pipeline-stages must be at least 1; got -2");
  EXPECT_THROW(Topology::of(0, 1), InternalError);
}

TEST(Topology, PlacedRanksSitInTheirSlots) {
  // Slots (replica x 2 + stage) -> ranks: column 0 is ranks 3, 0; column 1 is ranks 1, 2.
  const auto t = Topology::placed(4, 2, {3, 0, 1, 2});
  EXPECT_EQ(t.slotOf(3), 0);
  EXPECT_EQ(t.slotOf(0), 1);
  EXPECT_EQ(t.slotOf(2), 3);
  EXPECT_EQ(t.stageOf(0), 1);
  EXPECT_EQ(t.replicaOf(1), 1);
  EXPECT_EQ(t.rankOf(0, 0), 3);
  EXPECT_EQ(t.columnRanks(0), (std::vector<int>{3, 0}));
  EXPECT_EQ(t.stageRanks(1), (std::vector<int>{0, 2}));
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(t.rankAt(t.slotOf(rank)), rank);
  EXPECT_EQ(Topology::of(4, 2).slotOf(3), 3);  // unplaced: a rank's slot is its rank
}

TEST(Topology, PlacedRefusesWhatIsNotAPermutation) {
  EXPECT_THROW(Topology::placed(4, 2, {0, 1, 1, 2}), InternalError);
  EXPECT_THROW(Topology::placed(4, 2, {0, 1, 2}), InternalError);
  EXPECT_THROW(Topology::placed(4, 2, {0, 1, 2, 4}), InternalError);
  EXPECT_EQ(usageErrorOf([] {
              Topology::placed(4, 3, {0, 1, 2, 3});
            }),
            "--nodes 4 is not a multiple of --pipeline-stages 3");
  EXPECT_THROW(Topology::placed(4, 2, {0, 1, 2, 3}).slotOf(4), InternalError);
}

}  // namespace
}  // namespace balancenet::pipeline

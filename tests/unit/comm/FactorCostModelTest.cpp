// The per-layer byte model of the hybrid choice, against hand-computed counts.
#include <gtest/gtest.h>

#include "balancenet/comm/FactorCostModel.h"

namespace balancenet::comm {
namespace {

// alexnet --width 0.25, first fully connected layer: 576 -> 256.
const FcLayerShape kFc{"layers.16", 256, 576, true};

TEST(FactorCostModel, AllReduceIsTheRingShareOfWeightAndBiasBothWays) {
  // (256*576 + 256) floats = 590848 B; the ring moves 2*3/4 of it each way on 4 nodes.
  EXPECT_EQ(allReduceLayerBytes(kFc, 4), 2 * 886272);
  EXPECT_EQ(allReduceLayerBytes(kFc, 1), 0);
}

TEST(FactorCostModel, SfbSendsOwnRowsToEveryPeerAndReceivesTheirs) {
  const std::vector<int64_t> batches{1, 30, 2, 3};
  const int64_t row = (256 + 576) * 4;
  EXPECT_EQ(sfbSentBytes(kFc, batches, 0), 3 * 1 * row);
  EXPECT_EQ(sfbReceivedBytes(kFc, batches, 0), 35 * row);
  EXPECT_EQ(sfbSentBytes(kFc, batches, 1), 3 * 30 * row);
  EXPECT_EQ(sfbReceivedBytes(kFc, batches, 1), 6 * row);
}

TEST(FactorCostModel, WorstRankDecidesWithUnequalBatches) {
  const auto d = decideFcLayer(kFc, {1, 30, 2, 3});
  EXPECT_EQ(d.worstRank, 1);
  EXPECT_EQ(d.sfbBytes, (3 * 30 + 6) * 832 * 4);  // 319488 < 1772544
  EXPECT_TRUE(d.sfb);
}

TEST(FactorCostModel, CrossOverFromSfbAtSmallBatchesToAllReduceAtLargeOnes) {
  // Equal K on 4 nodes: SFB moves 2*3*K*832*4 = 19968*K bytes, all-reduce 1772544: flips after K = 88.
  for (int64_t k : {1, 8, 64, 88}) EXPECT_TRUE(decideFcLayer(kFc, {k, k, k, k}).sfb) << k;
  for (int64_t k : {89, 128, 512}) EXPECT_FALSE(decideFcLayer(kFc, {k, k, k, k}).sfb) << k;
  EXPECT_EQ(decideFcLayer(kFc, {88, 88, 88, 88}).sfbBytes, 19968 * 88);
}

TEST(FactorCostModel, NarrowOutputLayersPreferAllReduceEvenAtSmallBatches) {
  // 256 -> 10 on 4 nodes: all-reduce 2*(2570*4)*3/2 = 30840; SFB 19968/832*266*K = 6384*K: flips after K = 4.
  const FcLayerShape logits{"layers.21", 10, 256, true};
  EXPECT_EQ(allReduceLayerBytes(logits, 4), 30840);
  EXPECT_TRUE(decideFcLayer(logits, {4, 4, 4, 4}).sfb);
  EXPECT_FALSE(decideFcLayer(logits, {5, 5, 5, 5}).sfb);
}

TEST(FactorCostModel, TiesGoToAllReduce) {
  const FcLayerShape tiny{"t", 1, 3, true};  // all-reduce 2*(4*4) = 32 B; SFB 2*1*4*4 = 32 B
  const auto d = decideFcLayer(tiny, {1, 1});
  EXPECT_EQ(d.allReduceBytes, d.sfbBytes);
  EXPECT_FALSE(d.sfb);
}

TEST(FactorCostModel, ChoiceChangesWithTheSplit) {
  const std::vector<FcLayerShape> shapes{kFc, {"layers.21", 10, 256, true}};
  // Equal split of 12: every rank moves (3*3 + 9) rows of 266 floats for the logits layer: 19152 < 30840.
  auto equal = decideFcLayers(shapes, {3, 3, 3, 3});
  EXPECT_TRUE(equal[0].sfb);
  EXPECT_TRUE(equal[1].sfb);
  // Same global batch, one node takes most of it: its (3*9 + 3) rows cost 31920 > 30840.
  auto skewed = decideFcLayers(shapes, {1, 1, 1, 9});
  EXPECT_TRUE(skewed[0].sfb);
  EXPECT_FALSE(skewed[1].sfb);
  EXPECT_EQ(skewed[1].sfbBytes, 31920);
  EXPECT_EQ(skewed[1].worstRank, 3);
}

TEST(FactorCostModel, TableNamesLayerShapeSplitBytesAndChoice) {
  const auto table = decisionTable(decideFcLayers({kFc}, {1, 30, 2, 3}), {1, 30, 2, 3});
  EXPECT_NE(table.find("layers.16"), std::string::npos) << table;
  EXPECT_NE(table.find("256x576"), std::string::npos) << table;
  EXPECT_NE(table.find("1,30,2,3"), std::string::npos) << table;
  EXPECT_NE(table.find("1772544"), std::string::npos) << table;
  EXPECT_NE(table.find("319488"), std::string::npos) << table;
  EXPECT_NE(table.find("sfb"), std::string::npos) << table;
}

}  // namespace
}  // namespace balancenet::comm

// Exchange: phase counts of each all-reduce algorithm and the steps of Gloo's radix-2 bcube.
#include <gtest/gtest.h>

#include "balancenet/comm/Exchange.h"

namespace balancenet::comm {
namespace {

TEST(ExchangeTest, HalvingDoublingGroupsAreTwosThenTheRest) {
  EXPECT_EQ(halvingDoublingGroups(8), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(halvingDoublingGroups(6), (std::vector<int>{2, 3}));
  EXPECT_EQ(halvingDoublingGroups(12), (std::vector<int>{2, 2, 3}));
  EXPECT_EQ(halvingDoublingGroups(5), (std::vector<int>{5}));
  EXPECT_TRUE(halvingDoublingGroups(1).empty());
}

TEST(ExchangeTest, PhasesPerAlgorithm) {
  EXPECT_EQ(exchangePhases(Exchange::Ring, 4), 6);
  EXPECT_EQ(exchangePhases(Exchange::Ring, 8), 14);
  EXPECT_EQ(exchangePhases(Exchange::HalvingDoubling, 4), 4);
  EXPECT_EQ(exchangePhases(Exchange::HalvingDoubling, 8), 6);
  EXPECT_EQ(exchangePhases(Exchange::HalvingDoubling, 6), 4);
  EXPECT_EQ(exchangePhases(Exchange::HalvingDoubling, 5), 2);
  EXPECT_EQ(exchangePhases(Exchange::AllToAll, 8), 2);
  for (auto e : {Exchange::Ring, Exchange::HalvingDoubling, Exchange::AllToAll})
    EXPECT_EQ(exchangePhases(e, 1), 0) << exchangeName(e);
}

}  // namespace
}  // namespace balancenet::comm

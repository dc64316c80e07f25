// GroupPrefixes and joinGroupUnder: every group's keys under its own prefix of the job's store.
#include "balancenet/comm/GroupPrefixes.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <set>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/comm/Rendezvous.h"
#include "testing/ThreadRanks.h"

namespace balancenet::comm {
namespace {

TEST(GroupPrefixes, EachGroupHasItsOwnPrefix) {
  EXPECT_EQ(federatedChannelPrefix(3, 7), "fed/3/7");
  EXPECT_EQ(elasticGenerationPrefix(2), "elastic/g2/pg");
  EXPECT_EQ(subgroupPrefix({0, 2, 5}), "sub/0,2,5");
  const std::set<std::string> all{kJobGroupPrefix,
                                  kProbeGroupPrefix,
                                  kParameterServerGroupPrefix,
                                  federatedChannelPrefix(1, 0),
                                  federatedChannelPrefix(1, 1),
                                  federatedChannelPrefix(0, 1),
                                  elasticGenerationPrefix(0),
                                  elasticGenerationPrefix(1),
                                  subgroupPrefix({0, 1})};
  EXPECT_EQ(all.size(), 9u);
}

TEST(GroupPrefixes, ScopedStorePutsThePrefixBeforeEveryKey) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  scopedStore("ps", store)->set("k", std::vector<uint8_t>{1});
  EXPECT_TRUE(store->check({"ps/k"}));
  EXPECT_FALSE(store->check({"k"}));
}

// Two groups of the same ranks over one store: each works, and each keeps to its own keys.
TEST(GroupPrefixes, JoinGroupUnderFormsAGroupInItsOwnKeys) {
  testing::runRanks(2, [](Communicator& main) {
    auto side =
        joinGroupUnder(kProbeGroupPrefix, main.sharedStore(), main.rank(), main.size(), std::chrono::seconds(30));
    EXPECT_EQ(side->rank(), main.rank());
    auto t = at::full({1}, main.rank() + 1.0f);
    side->allreduceSum(t);
    EXPECT_FLOAT_EQ(t.item<float>(), 3.0f);
    side->sharedStore()->set("mark/" + std::to_string(main.rank()), std::vector<uint8_t>{1});
    EXPECT_TRUE(main.sharedStore()->check({std::string(kProbeGroupPrefix) + "/mark/" + std::to_string(main.rank())}));
  });
}

}  // namespace
}  // namespace balancenet::comm

// A policy's explicit state: a restored policy decides exactly as the one it was saved from.
#include <gtest/gtest.h>

#include "PolicyTestSupport.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/policies/BalancedPolicy.h"

namespace balancenet::orchestrator {
namespace {

TEST(PolicyState, RestoredBalancedPolicyDecidesAsTheOriginal) {
  // A fixed cost on rank 1 and a slow rank 2: the fitted models (a_i, c_i, histories) are what matters.
  const auto time = [](int r, int64_t b) {
    return (r == 1 ? 5.0 : 0.0) + (r == 2 ? 3.0 : 1.0) * static_cast<double>(b);
  };
  auto in = testing::blankInput(3, 96);
  BalancedPolicy original;
  for (int i = 0; i < 3; ++i) {  // a few decisions: histories over several batch sizes
    testing::observe(in, time);
    in.current = original.decide(in).split;
  }
  BalancedPolicy restored;
  restored.loadState(original.saveState());
  ASSERT_EQ(restored.models().size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(restored.models()[i].a(), original.models()[i].a());
    EXPECT_EQ(restored.models()[i].c(), original.models()[i].c());
  }
  // The next decisions, on a changed node (rank 0 now 2x slower), agree to the note.
  const auto slower = [&](int r, int64_t b) { return (r == 0 ? 2.0 : 1.0) * time(r, b); };
  auto inRestored = in;
  for (int i = 0; i < 3; ++i) {
    testing::observe(in, slower);
    testing::observe(inRestored, slower);
    const Decision a = original.decide(in), b = restored.decide(inRestored);
    EXPECT_EQ(a.split.batches, b.split.batches);
    EXPECT_EQ(a.note, b.note);
    in.current = a.split;
    inRestored.current = b.split;
  }
  // A fresh policy (no state) may differ: the restored one must not have started afresh.
  EXPECT_EQ(restored.saveState(), original.saveState());
  EXPECT_NE(BalancedPolicy().saveState(), original.saveState());
}

TEST(PolicyState, UnreadableStateIsARuntimeFailureAndEmptyKeepsThePolicyAsBuilt) {
  BalancedPolicy policy;
  EXPECT_THROW(policy.loadState("{not json"), RuntimeFailure);
  EXPECT_THROW(policy.loadState(R"([{"a": 1}])"), RuntimeFailure);
  policy.loadState("");
  EXPECT_TRUE(policy.models().empty());
}

}  // namespace
}  // namespace balancenet::orchestrator

// The job as an elastic generation sees it: the launched group keeps its configuration; a re-formed one splits
// the global batch equally over its members, whose emulated speeds and links stay with the workers they were
// given to; splits.csv goes on from the newest committed step with a note of the change.
#include "balancenet/worker/GenerationConfig.h"

#include <gtest/gtest.h>

#include "balancenet/elastic/Membership.h"

namespace balancenet::worker {
namespace {

job::JobConfig fourWorkers() {
  job::JobConfig c;
  c.trainer.globalBatch = 100;
  c.split = Split::parse("40,30,20,10", 4, 100);
  c.emulation.slowdown = emulation::FactorSchedule::parse("--slowdown", "1,2,3,4", "--slowdown-schedule", "", 4);
  c.emulation.netDelayMs = {1, 2, 3, 4};
  return c;
}

TEST(GenerationConfig, TheLaunchedGroupKeepsItsConfigurationWhole) {
  const auto c = fourWorkers();
  const auto g = forMembers(c, {0, 1, 2, 3});
  EXPECT_EQ(g.split.batches, c.split.batches);
  EXPECT_EQ(g.emulation.slowdown.at(0, 3), 4);
}

TEST(GenerationConfig, AReformedGroupSplitsEquallyAndKeepsEachWorkersEmulation) {
  const auto g = forMembers(fourWorkers(), {0, 2, 3});  // worker 1 left: ranks 0, 1, 2 are workers 0, 2, 3
  EXPECT_EQ(g.split.batches, Split::equal(100, 3).batches);
  EXPECT_EQ(g.split.worldSize(), 3);
  EXPECT_EQ(g.emulation.slowdown.at(0, 0), 1);
  EXPECT_EQ(g.emulation.slowdown.at(0, 1), 3);
  EXPECT_EQ(g.emulation.slowdown.at(0, 2), 4);
  EXPECT_EQ(g.emulation.netDelayMs, (std::vector<double>{1, 3, 4}));
  // The same members in another order are another group too: rank r is the worker members[r].
  const auto swapped = forMembers(fourWorkers(), {1, 0, 2, 3});
  EXPECT_EQ(swapped.split.batches, Split::equal(100, 4).batches);
  EXPECT_EQ(swapped.emulation.slowdown.at(0, 0), 2);
}

// --shard-state slices the optimiser state by the caps of the ranks: each cap stays with its worker, and a joiner
// beyond the launched workers has none (as its own WorkerMemory counts it).
TEST(GenerationConfig, AReformedGroupKeepsEachWorkersMemoryCap) {
  auto c = fourWorkers();
  c.memoryLimitMb = {400, 300, 200, 100};
  EXPECT_EQ(forMembers(c, {0, 2, 3}).memoryLimitMb, (std::vector<double>{400, 200, 100}));
  EXPECT_EQ(forMembers(c, {1, 3, 4}).memoryLimitMb, (std::vector<double>{300, 100, 0}));
  c.memoryLimitMb.clear();  // no caps: none after the change either
  EXPECT_TRUE(forMembers(c, {0, 2}).memoryLimitMb.empty());
}

TEST(GenerationConfig, TheSplitLogGoesOnFromTheNewestCommittedStepWithANote) {
  elastic::Generation first;
  first.members = {0, 1, 2, 3};
  EXPECT_FALSE(splitLogStart(first, 0).continueLog);  // generation 0 starts the log

  elastic::Generation later;
  later.number = 2;
  later.members = {0, 2, 3};
  later.committed = {40, 42, 41};
  const auto o = splitLogStart(later, 4);
  EXPECT_TRUE(o.continueLog);
  EXPECT_EQ(o.firstStep, 42);  // the rank holding the newest state
  EXPECT_EQ(o.firstNote, "membership change: 4 -> 3 workers");
  EXPECT_EQ(splitLogStart(later, 0).firstNote,
            "membership change: 3 workers");  // a joiner: the count before is unknown
}

}  // namespace
}  // namespace balancenet::worker

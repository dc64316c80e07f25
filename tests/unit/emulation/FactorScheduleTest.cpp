// Per-node factor schedules: parsing, errors, values in force at each step.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/emulation/FactorSchedule.h"

namespace balancenet::emulation {
namespace {

TEST(FactorSchedule, ValuesChangeAtTheGivenSteps) {
  auto s = FactorSchedule::parse("--node-speed", "100,100,100,100", "--speed-schedule",
                                 "100=100,100,100,25;200=100,100,100,100", 4);
  EXPECT_DOUBLE_EQ(s.at(0, 3), 100);
  EXPECT_DOUBLE_EQ(s.at(99, 3), 100);
  EXPECT_DOUBLE_EQ(s.at(100, 3), 25);
  EXPECT_DOUBLE_EQ(s.at(199, 3), 25);
  EXPECT_DOUBLE_EQ(s.at(200, 3), 100);
  EXPECT_DOUBLE_EQ(s.at(150, 0), 100);
  EXPECT_TRUE(FactorSchedule::parse("--slowdown", "", "--slowdown-schedule", "", 2).empty());
}

TEST(FactorSchedule, RejectsMalformedInput) {
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "1,4", "--slowdown-schedule", "", 3), UsageError);  // wrong length
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "1,0", "--slowdown-schedule", "", 2), UsageError);  // not positive
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "1,x", "--slowdown-schedule", "", 2), UsageError);  // not a number
  EXPECT_THROW(FactorSchedule::parse("--node-speed", "100,inf", "--speed-schedule", "", 2), UsageError);  // not finite
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "1,2", "--slowdown-schedule", "1e2=1,3", 2),
               UsageError);  // not an integer step
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "1,2", "--slowdown-schedule", "100:1,3", 2), UsageError);  // no '='
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "1,2", "--slowdown-schedule", "-5=1,3", 2),
               UsageError);  // negative step
  EXPECT_THROW(FactorSchedule::parse("--slowdown", "", "--slowdown-schedule", "10=1,3", 2),
               UsageError);  // schedule without base
  try {
    FactorSchedule::parse("--node-speed", "100,100,25", "--speed-schedule", "", 4);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--node-speed has 3 values but the job has 4 workers");
  }
  try {
    FactorSchedule::parse("--node-speed", "100,25", "--speed-schedule", "10=100", 2);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--speed-schedule has 1 values but the job has 2 workers");
  }
}

TEST(FactorSchedule, PerNodeListsMayAllowZero) {
  EXPECT_EQ(FactorSchedule::perNode("--net-delay-ms", "0,0,5", 3, true), (std::vector<double>{0, 0, 5}));
  EXPECT_THROW(FactorSchedule::perNode("--net-delay-ms", "0,-1,5", 3, true), UsageError);
}

// After an elastic re-form rank r is the worker launched as nodes[r]: its values follow it.
TEST(FactorSchedule, ValuesFollowTheNodesTheyWereGivenTo) {
  auto s = FactorSchedule::parse("--node-speed", "10,20,30", "--speed-schedule", "5=11,21,31", 3);
  auto survivors = s.forNodes({0, 2});
  EXPECT_EQ(survivors.at(0, 1), 30);
  EXPECT_EQ(survivors.at(5, 1), 31);
  EXPECT_EQ(survivors.at(5, 0), 11);
  EXPECT_EQ(s.forNodes({4}).at(0, 0), 20);  // a joiner beyond the list: node % size
  EXPECT_EQ(FactorSchedule::pick({1, 2, 3}, {2, 0}), (std::vector<double>{3, 1}));
  EXPECT_TRUE(FactorSchedule::pick({}, {0, 1}).empty());
}

}  // namespace
}  // namespace balancenet::emulation

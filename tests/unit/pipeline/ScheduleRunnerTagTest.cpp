// ScheduleRunner::tagFor: every micro-batch a step may have (kMaxMicroBatches, far beyond the old 1024) gets
// tags of its own, distinct between neighbouring steps and directions, below the other tag spaces (1 << 27).
#include <gtest/gtest.h>

#include <set>

#include "balancenet/pipeline/MicroBatches.h"
#include "balancenet/pipeline/ScheduleRunner.h"

namespace balancenet::pipeline {
namespace {

TEST(ScheduleRunnerTags, MoreThan1024MicroBatchesHaveTagsOfTheirOwn) {
  std::set<int> seen;
  for (int64_t step : {0, 1, 2, 3})
    for (int micro : {0, 1, 1023, 1024, 1025, 5000, kMaxMicroBatches - 1})
      for (auto direction : {Action::Forward, Action::Backward}) {
        const int tag = ScheduleRunner::tagFor(step, micro, direction);
        EXPECT_GE(tag, 0);
        EXPECT_LT(tag, 1 << 27) << "the re-partition's move tags begin there";
        EXPECT_TRUE(seen.insert(tag).second) << "step " << step << " micro " << micro;
      }
  EXPECT_EQ(ScheduleRunner::tagFor(1'000'003, 1024, Action::Forward),
            ScheduleRunner::tagFor(3, 1024, Action::Forward));  // steps wrap, one step is in flight at a time
}

}  // namespace
}  // namespace balancenet::pipeline

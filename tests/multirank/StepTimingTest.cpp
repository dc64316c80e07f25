// What a step record's compute time holds: the forward and backward of the rank's own batch, not the
// split decision before them (a collective that waits for the slowest rank to arrive).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "balancenet/orchestrator/Allocator.h"
#include "testing/DistributedTraining.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet {
namespace {

constexpr int64_t kSlowDecisionStep = 2;
constexpr int kDecisionMs = 300;

// A fixed split whose decision at one step takes kDecisionMs (as a gather waiting for a slow rank does);
// it keeps every record the trainer reports.
class SlowDecisionAllocator : public orchestrator::Allocator {
 public:
  SlowDecisionAllocator(Split split, std::vector<metrics::StepRecord>& seen, std::mutex& mutex)
      : split_(std::move(split)), seen_(seen), mutex_(mutex) {}
  Split splitFor(int64_t step) override {
    if (step == kSlowDecisionStep) std::this_thread::sleep_for(std::chrono::milliseconds(kDecisionMs));
    return split_;
  }
  void observe(const metrics::StepRecord& mine) override {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_.push_back(mine);
  }

 private:
  Split split_;
  std::vector<metrics::StepRecord>& seen_;
  std::mutex& mutex_;
};

// Policies learn each rank's speed from compute times: a decision's wait counted as compute made the
// rank that waited longest (the fastest) look slow at every decision step.
TEST(StepTiming, ComputeTimeLeavesOutTheSplitDecision) {
  std::vector<metrics::StepRecord> seen;
  std::mutex mutex;
  const Split split{{8, 8}};
  const auto options = testing::comparisonOptions("sgd", 4, split.total(), 0.0);
  testing::distributedTraining(testing::comparisonModel("mlp"), options, testing::syntheticDataset(64, 5),
                               {2, [&] { return std::make_unique<SlowDecisionAllocator>(split, seen, mutex); }});
  ASSERT_EQ(seen.size(), 2u * 4);
  for (const auto& r : seen) {
    if (r.step != kSlowDecisionStep) continue;
    std::printf("rank %d step %lld: compute %.1f ms, whole step %.1f ms (decision %d ms)\n", r.rank,
                static_cast<long long>(r.step), r.computeMs, r.updateMs, kDecisionMs);
    EXPECT_LT(r.computeMs, kDecisionMs / 2) << "rank " << r.rank;
    EXPECT_GE(r.updateMs, kDecisionMs) << "the step's wall time still holds the decision";
  }
}

}  // namespace
}  // namespace balancenet

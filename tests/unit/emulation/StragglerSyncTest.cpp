// Stragglers: the sleep follows the mode's rule and is reported as compute, not communication.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/emulation/StragglerSync.h"

namespace balancenet::emulation {
namespace {

// The real strategy stand-in: takes no time and counts calls.
class CountingSync : public comm::GradientSync {
 public:
  int calls = 0;
  comm::SyncStats synchronize(const std::vector<at::Tensor>&, at::Tensor&, const comm::SyncContext&) override {
    ++calls;
    comm::SyncStats stats{0.5, 100, 0};
    stats.phases = 6;
    return stats;
  }
};

comm::SyncStats run(StragglerSync& sync, int64_t step, int64_t batch, double computeMs) {
  std::vector<at::Tensor> grads;
  auto scalars = at::zeros({1});
  return sync.synchronize(grads, scalars, {step, batch, computeMs});
}

TEST(StragglerSync, RelativeSleepsFactorMinusOneTimesCompute) {
  auto inner = std::make_unique<CountingSync>();
  auto* counter = inner.get();
  StragglerSync sync(std::move(inner), StragglerSync::Mode::Relative,
                     FactorSchedule::parse("--slowdown", "1,4", "--slowdown-schedule", "", 2), /*rank=*/1);
  auto stats = run(sync, 0, 10, 20.0);  // 20 ms of real compute -> 60 ms more
  EXPECT_EQ(counter->calls, 1);
  EXPECT_GE(stats.emulatedComputeMs, 59.0);
  EXPECT_LT(stats.emulatedComputeMs, 120.0);
  EXPECT_NEAR(stats.elapsedMs - stats.emulatedComputeMs, 0.5, 1e-9);  // the inner sync's own time
  EXPECT_EQ(stats.bytesSent, 100);
  EXPECT_EQ(stats.phases, 6);  // the inner sync's, passed on
}

TEST(StragglerSync, PacedFillsUpToBatchOverSpeedAndFollowsTheSchedule) {
  StragglerSync sync(std::make_unique<CountingSync>(), StragglerSync::Mode::Paced,
                     FactorSchedule::parse("--node-speed", "100,50", "--speed-schedule", "3=100,400", 2), /*rank=*/1);
  // 10 samples at 50 samples/s = 200 ms; 30 ms were real compute -> about 170 ms of sleep.
  auto slow = run(sync, 0, 10, 30.0);
  EXPECT_GE(slow.emulatedComputeMs, 169.0);
  EXPECT_LT(slow.emulatedComputeMs, 260.0);
  // From step 3 the node runs at 400 samples/s: 10 samples = 25 ms < 30 ms of real compute: no sleep.
  auto fast = run(sync, 3, 10, 30.0);
  EXPECT_LT(fast.emulatedComputeMs, 5.0);
}

}  // namespace
}  // namespace balancenet::emulation

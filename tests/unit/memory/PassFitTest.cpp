// PassFit: samples per pass within a budget, the micro-steps a share needs, the share fixed micro-steps hold.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/memory/PassFit.h"

namespace balancenet::memory {
namespace {

constexpr int64_t kMiB = 1 << 20;

TEST(PassFit, SamplesPerPassAreWhatTheBudgetHoldsBesideTheState) {
  const WorkerFootprint f{10 * kMiB, kMiB};
  EXPECT_EQ(samplesPerPass(f, 26.5 * kMiB), 16);  // 16.5 MiB left: 16 whole samples
  EXPECT_EQ(samplesPerPass(f, 11 * kMiB), 1);
  EXPECT_EQ(samplesPerPass(f, 10.9 * kMiB), 0);  // not one sample beside the state
  EXPECT_EQ(samplesPerPass(f, 5 * kMiB), 0);
  EXPECT_EQ(samplesPerPass(f, 0), kUnlimited);  // no budget
  EXPECT_EQ(samplesPerPass({10 * kMiB, 0}, 26.5 * kMiB), kUnlimited);
}

TEST(PassFit, MicroStepsCutAShareIntoPassesThatFit) {
  EXPECT_EQ(microStepsFor(64, 16), 4);
  EXPECT_EQ(microStepsFor(65, 16), 5);
  EXPECT_EQ(microStepsFor(16, 16), 1);
  EXPECT_EQ(microStepsFor(0, 16), 1);  // an empty share still steps
  EXPECT_EQ(microStepsFor(1000, kUnlimited), 1);
  EXPECT_EQ(microStepsFor(7, 1), 7);
  EXPECT_THROW(microStepsFor(7, 0), InternalError);
  // The pieces trainer/MicroSteps cuts are as equal as can be, so none is larger than the pass: ceil(s / k) <= p.
  for (int64_t perPass = 1; perPass <= 20; ++perPass)
    for (int64_t share = 1; share <= 200; ++share) {
      const int64_t k = microStepsFor(share, perPass);
      EXPECT_LE((share + k - 1) / k, perPass) << share << " " << perPass;
      if (k > 1) EXPECT_GT(share, (k - 1) * perPass) << "one micro-step fewer would have done";
    }
}

TEST(PassFit, FixedMicroStepsCapTheShare) {
  EXPECT_EQ(shareCapFor(1, 16), 16);
  EXPECT_EQ(shareCapFor(3, 16), 48);
  EXPECT_EQ(shareCapFor(3, kUnlimited), kUnlimited);
  EXPECT_EQ(shareCapFor(4, kUnlimited / 2), kUnlimited);  // no overflow
}

}  // namespace
}  // namespace balancenet::memory

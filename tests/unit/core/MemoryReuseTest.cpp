// keepFreedMemory: the user's malloc settings win; otherwise freed tensor memory is reused, not re-faulted.
#include <sys/resource.h>

#include <cstdlib>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/core/MemoryReuse.h"

namespace balancenet {
namespace {

long minorPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A training step in miniature: the zoo's cnn (conv 32, conv 64, max-pool, fc 128, fc 10) on 64 samples,
// forward and backward, in plain ATen: tensors from a few kB to 9 MB allocated and freed every step.
class MiniatureStep {
 public:
  MiniatureStep() {
    at::manual_seed(1);
    for (auto* w : {&conv1_, &conv2_, &fc1_, &fc2_}) w->requires_grad_();
  }
  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      auto h = at::relu(at::conv2d(at::relu(at::conv2d(x_, conv1_)), conv2_));
      auto logits = at::linear(at::relu(at::linear(at::max_pool2d(h, {2, 2}).flatten(1), fc1_)), fc2_);
      at::cross_entropy_loss(logits, y_).backward();
      for (auto* w : {&conv1_, &conv2_, &fc1_, &fc2_}) w->mutable_grad() = at::Tensor();
    }
  }

 private:
  at::Tensor x_ = at::randn({64, 1, 28, 28});
  at::Tensor y_ = at::randint(10, {64}, at::kLong);
  at::Tensor conv1_ = at::randn({32, 1, 3, 3}) * 0.1;
  at::Tensor conv2_ = at::randn({64, 32, 3, 3}) * 0.1;
  at::Tensor fc1_ = at::randn({128, 9216}) * 0.01;
  at::Tensor fc2_ = at::randn({10, 128}) * 0.1;
};

TEST(MemoryReuse, UserSettingsWinOtherwiseFreedMemoryIsReused) {
  setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=4096", 1);
  EXPECT_FALSE(keepFreedMemory());
  unsetenv("GLIBC_TUNABLES");
  setenv("MALLOC_MMAP_THRESHOLD_", "65536", 1);
  EXPECT_FALSE(keepFreedMemory());
  unsetenv("MALLOC_MMAP_THRESHOLD_");

  ASSERT_TRUE(keepFreedMemory());
  at::set_num_threads(1);
  MiniatureStep step;
  step.run(2);  // the first steps fault their pages in
  const long before = minorPageFaults();
  step.run(5);
  // With glibc's defaults every step hands ~30 MB back to the kernel and faults it in again (about
  // 7,000 faults per step, 35,000 here); with the memory kept, a step faults next to nothing.
  EXPECT_LT(minorPageFaults() - before, 2000);
}

}  // namespace
}  // namespace balancenet

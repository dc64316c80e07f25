// RecomputeMemory: the peak over the forward and each block's backward, and the passes' arithmetic.
#include "balancenet/recompute/RecomputeMemory.h"

#include <algorithm>

#include "balancenet/memory/PassFit.h"

namespace balancenet::recompute {

int64_t recomputedBytesPerSample(const std::vector<models::BlockInfo>& blocks) {
  constexpr int64_t kFloatBytes = 4;
  int64_t kept = 0;  // the outputs of the blocks before the one in hand
  int64_t peak = 0;
  for (const auto& b : blocks) {
    peak = std::max(peak, kept + b.memoryPerSampleBytes);  // this block's backward, rebuilt whole
    kept += b.outputElementsPerSample * kFloatBytes;
  }
  return std::max(peak, kept);  // the end of the forward: every block's output kept
}

bool recomputePays(int64_t share, int64_t plainPerPass, int64_t recomputedPerPass, int64_t microSteps) {
  if (recomputedPerPass <= 0) return false;
  if (plainPerPass <= 0) return true;
  if (recomputedPerPass <= plainPerPass || share <= 0) return false;
  if (microSteps >= 1) return memory::shareCapFor(microSteps, plainPerPass) < share;
  const auto saved =
      static_cast<double>(memory::microStepsFor(share, plainPerPass) - memory::microStepsFor(share, recomputedPerPass));
  return saved * kPassOverheadSamples > static_cast<double>(share) * kReforwardShare;
}

}  // namespace balancenet::recompute

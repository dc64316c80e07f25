// RecomputeMemory: what recomputation saves and what it costs, as the memory model counts them (docs/allocation.md,
// "Unequal memory"), and --recompute auto's choice for one worker. Pure functions of the model's blocks and counts.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/models/Blocks.h"

namespace balancenet::recompute {

// A forward is about a third of a forward and backward: recomputation runs every block's forward once more.
inline constexpr double kReforwardShare = 1.0 / 3.0;
// What one more pass costs beside its samples, in samples' worth: measured on M1 (bench/memory_capped.sh, cnn on
// the CPU: 64 samples in 4 passes cost 2.4% over one pass, about half a sample a pass). A GPU's small passes cost
// more; a larger value here only turns recomputation on sooner.
inline constexpr double kPassOverheadSamples = 0.5;

// Training memory one more sample costs when every block is recomputed: the blocks' outputs kept (float32) while
// the forward runs, and in backward, block i rebuilt whole (its memoryPerSampleBytes) beside the outputs of the
// blocks before it. Without recomputation the figure is the sum of every block's memoryPerSampleBytes.
int64_t recomputedBytesPerSample(const std::vector<models::BlockInfo>& blocks);

// --recompute auto for one worker whose `share` takes passes of `plainPerPass` samples without recomputation and
// `recomputedPerPass` with it (memory/PassFit's answers; 0: none fits, memory::kUnlimited: no cap). Recompute when
// nothing fits without it; under a fixed --accumulate (`microSteps` >= 1), when the share its passes hold without
// it is below `share` (the cap would bind); under --accumulate auto (`microSteps` 0), when the passes it saves
// cost more than its second forward (share x kReforwardShare against the passes saved x kPassOverheadSamples).
bool recomputePays(int64_t share, int64_t plainPerPass, int64_t recomputedPerPass, int64_t microSteps);

}  // namespace balancenet::recompute

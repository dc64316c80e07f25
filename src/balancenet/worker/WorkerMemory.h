// WorkerMemory: a data-parallel worker's memory as --accumulate uses it: what one pass of its share may hold, and
// the share the policies may give it.
#pragma once
#include <cstdint>
#include <vector>

#include <c10/core/Device.h>

#include "balancenet/job/JobConfig.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::worker {

struct WorkerPasses {
  int64_t samplesPerPass = 0;  // memory/PassFit: the most samples one forward and backward holds
  // The largest share its micro-steps hold, for the policies (NodeSample::shareCap): under --accumulate auto
  // none (memory::kUnlimited: more micro-steps instead), with a fixed K what K passes hold, 0 without a budget.
  int64_t shareCap = 0;
  // --recompute: whether this worker recomputes its blocks (blocks: always; auto: recompute::recomputePays on its
  // first share), and what one pass would hold without (samplesPerPass is the answer with, where it does).
  bool recompute = false;
  int64_t samplesPerPassWithout = 0;
};

// The budget: --memory-limit-mb for launch rank `member`, else 80% of a GPU's memory, else none (the CPU's memory
// is the node's, watched by the monitor). The footprint: the whole model's state and activations per sample
// (pipeline/MemoryEstimate.h, the estimate the launch check uses), or with --recompute the blocks' inputs and the
// largest block (recompute/RecomputeMemory.h). Throws UsageError in one line where the budget does not hold one
// sample beside the state.
WorkerPasses workerPasses(const job::JobConfig& c, int member, const models::BuiltModel& model, c10::Device device);

// --shard-state: every worker's slice of the model's `parameters` elements, sized by the room each worker's
// --memory-limit-mb leaves beside the parameters and their gradients (memory/StateSlices; equal without caps).
std::vector<int64_t> stateSlicesOf(const job::JobConfig& c, int64_t parameters, int world);

// The state worker `rank` holds: replicated, the parameters x pipeline::stateBytesPerParameter; under --shard-state
// the parameters and their gradients (8 bytes each) and the optimiser's slots for its slice only.
int64_t stateBytesOf(const job::JobConfig& c, int64_t parameters, int rank, int world);

}  // namespace balancenet::worker

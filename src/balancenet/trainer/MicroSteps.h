// MicroSteps: a worker's share of a step cut into --accumulate micro-steps whose gradients add up.
#pragma once
#include <cstdint>
#include <vector>

namespace balancenet::trainer {

struct MicroStep {
  int64_t begin = 0;
  int64_t size = 0;
};

// min(count, rows) contiguous pieces of [0, rows) as equal as can be (sizes differ by at most one), in
// order; a share of 0 rows is one empty piece, so the step still runs (and joins the synchronisation).
// Each piece's loss is still divided by the global batch, so the summed gradient is the share's.
std::vector<MicroStep> microSteps(int64_t rows, int64_t count);

}  // namespace balancenet::trainer

// PassFit: how many samples one forward and backward can take within a worker's memory, so how many micro-steps
// its share needs (--accumulate auto) or how large a share its fixed micro-steps hold (the policies' cap).
// Pure arithmetic: the footprint comes from the model's estimate (pipeline/MemoryEstimate.h), the budget from
// --memory-limit-mb or the device.
#pragma once
#include <cstdint>
#include <limits>

namespace balancenet::memory {

// What a worker holds in data parallelism: its state (parameters, gradients, optimiser slots: the same at any
// share) and what each sample of one pass adds (the activations kept for backward).
struct WorkerFootprint {
  int64_t stateBytes = 0;
  int64_t bytesPerSample = 0;
};

inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// The most samples one pass holds within `budgetBytes`: kUnlimited without a budget (<= 0) or without a cost per
// sample; 0 when not even one sample fits beside the state.
int64_t samplesPerPass(const WorkerFootprint& footprint, double budgetBytes);

// The fewest micro-steps that cut `share` into passes of at most `perPass` samples (>= 1: a share of 0 is one
// empty step, so the worker still joins the exchange). `perPass` must be at least 1.
int64_t microStepsFor(int64_t share, int64_t perPass);

// The largest share `microSteps` passes of `perPass` samples hold (kUnlimited when `perPass` is, or on overflow).
int64_t shareCapFor(int64_t microSteps, int64_t perPass);

}  // namespace balancenet::memory

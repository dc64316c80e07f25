// FloatBound: how far two float32 runs of the same training may end apart when they differ only in the order
// they sum in (the golden comparisons' bound, derived in FloatBound.cpp rather than tuned on one CPU).
#pragma once
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::testing {

// Float32 rounding units (eps = 2^-23) of the largest magnitude in play that one step of reordered sums may
// move a value by: the default of exactnessBound (see FloatBound.cpp for where the number comes from).
inline constexpr double kReorderedStepUlps = 256;

// The largest |difference| that float32 summation order explains after `steps` steps (or 1 for a single
// gradient or loss) between a run and `reference` (what it is compared with: parameters, gradients, a loss):
//   ulpsPerStep * eps32 * steps * max(1, max |reference|).
// A bug that weights, drops or repeats a gradient moves the parameters by ~lr * |g| in one step, orders of
// magnitude above it.
double exactnessBound(const std::vector<at::Tensor>& reference, int64_t steps, double ulpsPerStep = kReorderedStepUlps);

// The bound for runs under autocast (--precision bf16 or fp16), compared with one process at the same precision, and
// for gradients compressed on the wire (--grad-compress), compared with one float32 process:
//   8 * eps * max |reference - start|,
// eps the low type's (2^-7 for bf16, 2^-10 for fp16) and `start` the parameters both began from. FloatBound.cpp
// says where it comes from.
double mixedPrecisionBound(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& start, double eps);

}  // namespace balancenet::testing

// HeldOut: the rounding rule shared by the formats without a test split of their own.
#include "balancenet/data/HeldOut.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::data {

int64_t heldOutCount(int64_t n, double valFraction) {
  if (!(valFraction >= 0 && valFraction < 1))
    throw UsageError(fmt::format("--val-fraction {}: must be at least 0 and below 1", valFraction));
  if (valFraction == 0) return 0;
  return std::max<int64_t>(1, std::llround(static_cast<double>(n) * valFraction));
}

}  // namespace balancenet::data

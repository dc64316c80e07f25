// HeldOut: how many of a source's last samples form its held-out set (npy rows, token windows).
#pragma once
#include <cstdint>

namespace balancenet::data {

// round(n * valFraction), at least 1 when valFraction > 0, 0 when it is 0. Throws UsageError unless
// valFraction is in [0, 1).
int64_t heldOutCount(int64_t n, double valFraction);

}  // namespace balancenet::data

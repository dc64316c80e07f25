// GemmProbe: at::mm into a preallocated output, so the timing is the kernel and not the allocator.
#include "balancenet/metrics/GemmProbe.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include <ATen/ATen.h>

namespace balancenet::metrics {

double measureGemmFlops(double seconds) {
  constexpr int64_t n = 256;
  constexpr int warmUp = 3;  // first calls pay for thread-pool start-up and cold caches
  at::NoGradGuard noGrad;
  // Constants, not at::rand: the probe must not advance the global generator, whose stream the
  // training's dropout masks come from (a run's randomness would depend on whether the probe ran).
  const auto a = at::full({n, n}, 0.5f, at::kFloat);
  const auto b = at::full({n, n}, 0.25f, at::kFloat);
  auto c = at::empty({n, n}, at::kFloat);
  for (int i = 0; i < warmUp; ++i) at::mm_out(c, a, b);

  using Clock = std::chrono::steady_clock;
  const auto budget = std::chrono::duration<double>(std::max(seconds, 1e-3));
  const auto start = Clock::now();
  int64_t products = 0;
  std::chrono::duration<double> elapsed{0};
  do {
    at::mm_out(c, a, b);
    ++products;
    elapsed = Clock::now() - start;
  } while (elapsed < budget);
  return 2.0 * static_cast<double>(n * n * n) * static_cast<double>(products) / elapsed.count();
}

}  // namespace balancenet::metrics

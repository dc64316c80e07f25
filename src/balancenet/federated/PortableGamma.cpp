// PortableGamma: Marsaglia-Tsang over mt19937_64's portable output.
#include "balancenet/federated/PortableGamma.h"

#include <algorithm>
#include <cmath>

#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"

namespace balancenet::federated {

double logGammaDraw(std::mt19937_64& gen, double alpha) {
  if (!(alpha > 0) || !std::isfinite(alpha))
    throw InternalError("logGammaDraw: alpha must be positive and finite, got " + std::to_string(alpha));
  if (alpha < 1) {
    const double u = 1.0 - uniform01(gen);  // (0, 1]: log stays finite
    return logGammaDraw(gen, alpha + 1) + std::log(u) / alpha;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = standardNormal(gen);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform01(gen);
    if (u < 1.0 - 0.0331 * x * x * x * x) return std::log(d * v);
    if (u > 0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return std::log(d * v);
  }
}

std::vector<double> dirichletDraw(std::mt19937_64& gen, double alpha, int n) {
  if (n < 1) throw InternalError("dirichletDraw: needs at least one part, got " + std::to_string(n));
  std::vector<double> logs(static_cast<size_t>(n));
  for (auto& l : logs) l = logGammaDraw(gen, alpha);
  // Normalising exp(l - max) keeps the largest part at 1 before the division: no 0/0 when every draw
  // underflows (alpha = 0.01 and below).
  const double top = *std::max_element(logs.begin(), logs.end());
  double sum = 0;
  for (auto& l : logs) sum += (l = std::exp(l - top));
  for (auto& l : logs) l /= sum;
  return logs;
}

}  // namespace balancenet::federated

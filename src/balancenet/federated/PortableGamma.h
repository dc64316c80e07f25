// PortableGamma: Gamma and Dirichlet draws identical on every platform (std::gamma_distribution's algorithm
// is implementation-defined, so the same seed would give other label partitions elsewhere).
#pragma once
#include <random>
#include <vector>

namespace balancenet::federated {

// log of one Gamma(alpha, 1) draw, alpha > 0 (Marsaglia and Tsang 2000; for alpha < 1 the boost
// Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha)). In logs because for small alpha the draw underflows.
double logGammaDraw(std::mt19937_64& gen, double alpha);

// One draw of the symmetric Dirichlet(alpha) over `n` parts: non-negative, summing to 1.
std::vector<double> dirichletDraw(std::mt19937_64& gen, double alpha, int n);

}  // namespace balancenet::federated

// PortableRandom: random draws identical on every platform and standard library (reproducible runs).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace balancenet {

// splitmix64 finaliser: decorrelates nearby seeds (seed, epoch, step) before seeding a generator.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A generator for the pair (seed, salt); mixing the salt through a second splitmix64 keeps pairs from
// colliding through the XOR.
inline std::mt19937_64 seededGenerator(uint64_t seed, uint64_t salt) {
  return std::mt19937_64(splitmix64(seed ^ splitmix64(salt)));
}

// Uniform in [0, bound) by rejection: std::uniform_int_distribution's algorithm is
// implementation-defined, mt19937_64's output sequence is not. Rejecting draws below 2^64 mod bound
// leaves a range that is an exact multiple of bound, so the modulo is unbiased.
inline uint64_t boundedDraw(std::mt19937_64& gen, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = gen();
    if (r >= threshold) return r % bound;
  }
}

// Uniform in [0, 1) from the top 53 bits.
inline double uniform01(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

// One standard normal draw (Box-Muller over two portable uniforms; std::normal_distribution's algorithm is
// implementation-defined).
inline double standardNormal(std::mt19937_64& gen) {
  const double u1 = 1.0 - uniform01(gen);  // (0, 1]: log stays finite
  const double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Fisher-Yates with boundedDraw: the same order on every platform (std::shuffle's algorithm is not specified).
template <class T>
void portableShuffle(std::vector<T>& items, std::mt19937_64& gen) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[boundedDraw(gen, i)]);
}

}  // namespace balancenet

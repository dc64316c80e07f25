// Distribution: a named, seeded random law for the simulator's node speeds and step-time noise.
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace balancenet::simulate {

// "const:x", "uniform:lo,hi", "normal:mean,sd", "lognormal:median,sigma" (exp of normal(ln median, sigma)).
// Draws use only mt19937_64's output (portable), so a seed gives the same run on every platform.
struct Distribution {
  enum class Kind { Constant, Uniform, Normal, LogNormal };
  Kind kind = Kind::Constant;
  double a = 1, b = 0;

  double draw(std::mt19937_64& gen) const;
  double mean() const;
  // Throws UsageError naming `flag` for an unknown law, a wrong parameter count or an invalid parameter.
  static Distribution parse(const std::string& text, const std::string& flag);
};

}  // namespace balancenet::simulate

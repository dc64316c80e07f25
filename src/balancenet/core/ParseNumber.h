// ParseNumber: a whole string as one finite number or one integer, for flags, lists and environment variables.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace balancenet {

// The number `text` spells out, all of it ("2.5", "1e6"); nothing for "", "2x", "nan", "inf" or an overflow.
inline std::optional<double> parseFiniteNumber(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The integer `text` spells out, all of it ("42", "-3"); nothing for "", "4x", "2.5" or a value outside Int.
// Callers turn nothing into their own error, which names the flag or variable.
template <class Int = int64_t>
std::optional<Int> parseInteger(const std::string& text) {
  static_assert(std::is_integral_v<Int> && std::is_signed_v<Int>, "a signed integer type");
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max())
    return std::nullopt;
  return static_cast<Int>(v);
}

}  // namespace balancenet

// ParseNumber: a whole string as one finite number, for flags whose values are lists or carry units.
#pragma once
#include <cmath>
#include <optional>
#include <string>

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

}  // namespace balancenet

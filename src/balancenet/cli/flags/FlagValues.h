// FlagValues: what the flag groups share for their values as given: the unset mark of a number flag, and the
// JobConfig's durations in the seconds their flags take, and back.
#pragma once
#include <chrono>
#include <cstdint>
#include <limits>

namespace balancenet::cli {

constexpr int kUnset = std::numeric_limits<int>::min();

inline double secondsOf(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }
inline std::chrono::milliseconds fromSeconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

}  // namespace balancenet::cli

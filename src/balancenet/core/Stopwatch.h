// Stopwatch over the monotonic clock, in milliseconds (what every step metric is expressed in), and secondsSince.
#pragma once
#include <chrono>

namespace balancenet {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double elapsedMs() const { return std::chrono::duration<double, std::milli>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// Seconds on the monotonic clock since `t`.
inline double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace balancenet

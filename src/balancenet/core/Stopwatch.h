// Stopwatch over the monotonic clock, in milliseconds (what every step metric is expressed in).
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

}  // namespace balancenet

// CpuStopwatch: CPU time this process used (every thread: Gloo's and the intra-op pool's too), in milliseconds.
#pragma once
#include <time.h>

namespace balancenet {

class CpuStopwatch {
 public:
  CpuStopwatch() : start_(nowMs()) {}
  double elapsedMs() const { return nowMs() - start_; }

  // CLOCK_PROCESS_CPUTIME_ID sums the process's threads; it is a system call, about a microsecond.
  static double nowMs() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  }

 private:
  double start_;
};

}  // namespace balancenet

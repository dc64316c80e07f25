// A process for MemoryReuseTest: runs a training step's allocations in miniature and prints how many
// page faults they cost, so that the test can start it with an environment of its choice (glibc reads
// its malloc settings once, at start-up: a test cannot change them in its own process).
//   memory_reuse_probe  ->  "kept=<0|1> first=<faults> steady=<faults> pages=<per step>"
// first: the faults of the 10 first steps (the heap grows to its working size during about 7 of them);
// steady: of the 5 steps after them.
#include <sys/resource.h>

#include <cstdio>
#include <vector>

#include <ATen/ATen.h>

#include "balancenet/core/MemoryReuse.h"

namespace {

// Faults of this thread only (with one intra-op thread it does all the work).
long minorPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// The zoo's cnn activations and gradients at 64 samples (2 to 9 MB each, 38 MB alive at the peak), every
// page written, then freed. Plain allocations rather than real convolutions: which algorithm and scratch
// buffers a convolution uses depends on the CPU, and buffers above glibc's largest mmap threshold
// (32 MB) are never kept.
constexpr std::int64_t kStepShapes[][4] = {{64, 32, 26, 26}, {64, 64, 24, 24}, {64, 64, 24, 24},
                                           {64, 64, 12, 12}, {64, 32, 26, 26}, {64, 9216, 1, 1}};

long faultsOf(int steps) {
  const long before = minorPageFaults();
  for (int i = 0; i < steps; ++i) {
    std::vector<at::Tensor> alive;
    for (const auto& s : kStepShapes) alive.push_back(at::empty({s[0], s[1], s[2], s[3]}).fill_(1.0f));
  }
  return minorPageFaults() - before;
}

}  // namespace

int main() {
  at::set_num_threads(1);
  const bool kept = balancenet::keepFreedMemory();
  const long first = faultsOf(10);
  const long steady = faultsOf(5);
  long pages = 0;
  for (const auto& s : kStepShapes) pages += s[0] * s[1] * s[2] * s[3] * static_cast<long>(sizeof(float)) / 4096;
  std::printf("kept=%d first=%ld steady=%ld pages=%ld\n", kept ? 1 : 0, first, steady, pages);
  return 0;
}

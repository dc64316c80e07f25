// What the GPU cases share: how many GPUs main() found, and the skip every case starts with.
#pragma once
#include <gtest/gtest.h>

namespace balancenet::testing {

extern int gpusHere;  // set by GpuMain.cpp before any case runs

// Skips the case (ctest then reports the test skipped, tests/gpu/CMakeLists.txt) where fewer GPUs than `needed`.
#define BALANCENET_NEEDS_GPUS(needed)                                                          \
  if (::balancenet::testing::gpusHere < (needed))                                              \
  GTEST_SKIP() << "needs " << (needed) << " GPU(s), found " << ::balancenet::testing::gpusHere \
               << ": runs on a GPU machine (scripts/gpu-check.sh)"

}  // namespace balancenet::testing

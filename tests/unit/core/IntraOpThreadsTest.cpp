// One intra-op thread count for ATen and the BLAS, and the BLAS that balancenet's binaries load.
#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "balancenet/core/IntraOpThreads.h"

namespace balancenet {
namespace {

// A BLAS with a pool of its own (MKL in PyPI's torch; OpenBLAS and BLIS elsewhere) must follow ATen's count:
// otherwise a worker with one intra-op thread would still run every sgemm on all cores (and two workers on two
// cores would oversubscribe them).
TEST(IntraOpThreads, TheBlasPoolFollowsAtensCount) {
  using GetThreads = int (*)();
  auto blasThreads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "mkl_get_max_threads"));
  if (!blasThreads) blasThreads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  ASSERT_NE(blasThreads, nullptr) << "the loaded BLAS (" << blasLibraryPath() << ") is neither MKL nor OpenBLAS";
  for (int n : {1, 2, 1}) {
    setIntraOpThreads(n);
    EXPECT_EQ(at::get_num_threads(), n);
    EXPECT_EQ(blasThreads(), n);
  }
}

// PyPI's torch does its maths with the MKL inside libtorch_cpu, and the run's summary says so.
TEST(IntraOpThreads, TheBlasIsTheWheelsMkl) {
  EXPECT_EQ(blasLibraryPath().rfind("MKL in ", 0), 0u) << blasLibraryPath();
  EXPECT_NE(blasLibraryPath().find("libtorch_cpu.so"), std::string::npos) << blasLibraryPath();
}

}  // namespace
}  // namespace balancenet

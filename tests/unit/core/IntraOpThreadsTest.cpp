// One intra-op thread count for ATen and the BLAS, and the BLAS that balancenet's binaries load.
#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "balancenet/core/IntraOpThreads.h"

namespace balancenet {
namespace {

// OpenBLAS starts one thread per core at load: without the call, a worker with one intra-op thread
// would still run every sgemm on all cores (and two workers on two cores would oversubscribe them).
TEST(IntraOpThreads, TheBlasPoolFollowsAtensCount) {
  using GetThreads = int (*)();
  auto blasThreads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (!blasThreads) GTEST_SKIP() << "the loaded BLAS (" << blasLibraryPath() << ") has no threads of its own";
  for (int n : {1, 2, 1}) {
    setIntraOpThreads(n);
    EXPECT_EQ(at::get_num_threads(), n);
    EXPECT_EQ(blasThreads(), n);
  }
}

#ifdef BALANCENET_EXPECTED_BLAS_DIR
// The executable's RPATH puts the optimised BLAS first whatever the system's libblas.so.3 alternative
// points to (cmake/BalancenetModule.cmake). A user's LD_PRELOAD of another BLAS would still win.
TEST(IntraOpThreads, TheBinaryLoadsTheBlasOfItsRpath) {
  if (getenv("LD_PRELOAD")) GTEST_SKIP() << "LD_PRELOAD chooses the BLAS";
  EXPECT_EQ(blasLibraryPath().rfind(BALANCENET_EXPECTED_BLAS_DIR "/", 0), 0u) << blasLibraryPath();
}
#endif

}  // namespace
}  // namespace balancenet

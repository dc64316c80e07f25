// main() of the GPU tests: loads torch's CUDA half before any tensor work (torch settles whether CUDA is there at
// its first question, device/GpuSupport.h), makes GPU arithmetic deterministic and free of TF32, then runs the
// cases. Where no GPU is found each case skips, saying so, and ctest reports the test as skipped, never passed.
#include <gtest/gtest.h>

#include <cstdlib>

#include <ATen/Context.h>

#include "balancenet/device/GpuSupport.h"
#include "gpu/GpuCases.h"

namespace balancenet::testing {
int gpusHere = 0;
}

int main(int argc, char** argv) {
  // cuBLAS is deterministic only with a fixed workspace, set before CUDA starts (PyTorch's reproducibility notes).
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
#ifdef BALANCENET_TEST_PLUGIN
  ::setenv("BALANCENET_CUDA_PLUGIN", BALANCENET_TEST_PLUGIN, /*overwrite=*/0);
#endif
  balancenet::testing::gpusHere = balancenet::device::gpuCount();
  if (balancenet::testing::gpusHere > 0) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
    // float32 everywhere: TF32 (cuDNN's default for convolutions) rounds products to 10 bits, far outside the
    // float32 bound the comparisons hold to.
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setBenchmarkCuDNN(false);
  }
  std::printf("GPUs: %d\n", balancenet::testing::gpusHere);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// Loading torch's CUDA half on demand: it works on a machine without a GPU (CUDA is then there, with no device),
// and a CPU job never needs it.
#include <gtest/gtest.h>

#include <cstdlib>

#include <ATen/DeviceAccelerator.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceChoice.h"
#include "balancenet/device/GpuSupport.h"

namespace balancenet::device {
namespace {

// Runs first in this binary (no other case asks torch about CUDA): torch settles it at its first question.
TEST(GpuSupport, LoadsTorchsCudaHalfOnDemand) {
#ifdef BALANCENET_TEST_PLUGIN
  ::setenv("BALANCENET_CUDA_PLUGIN", BALANCENET_TEST_PLUGIN, /*overwrite=*/0);
#endif
  ASSERT_NO_THROW(loadGpuSupport());
  const auto accelerator = at::accelerator::getAccelerator(false);
  ASSERT_TRUE(accelerator.has_value()) << "torch sees no accelerator after libtorch_cuda was loaded";
  EXPECT_EQ(*accelerator, c10::DeviceType::CUDA);
#ifdef BALANCENET_TEST_PLUGIN
  EXPECT_TRUE(ncclAvailable()) << "this build made libbalancenet_cuda.so, and it was not loaded";
#endif
  const int gpus = gpuCount();
  if (!gpuDriverPresent()) EXPECT_EQ(gpus, 0);
  std::printf("GPUs here: %d (driver present: %d, NCCL: %d)\n", gpus, gpuDriverPresent(), ncclAvailable());
}

TEST(GpuSupport, ACpuJobIsPreparedWithoutAGpu) {
  DeviceOptions cpu;
  cpu.device = "cpu";
  EXPECT_EQ(prepareDevice(cpu, 0), c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(describeDevice(c10::Device(c10::DeviceType::CPU)), "cpu");
}

TEST(GpuSupport, AutoFollowsTheHostAndCudaWithoutAGpuIsRefused) {
  DeviceOptions cuda;
  cuda.device = "cuda";
  if (gpuCount() == 0) {
    EXPECT_EQ(prepareDevice(DeviceOptions{}, 0), c10::Device(c10::DeviceType::CPU));
    EXPECT_THROW(prepareDevice(cuda, 0), UsageError);
  } else {
    EXPECT_EQ(prepareDevice(DeviceOptions{}, 0), c10::Device("cuda:0"));
    EXPECT_EQ(prepareDevice(cuda, 0), c10::Device("cuda:0"));
    EXPECT_NE(describeDevice(c10::Device("cuda:0")).find("GiB"), std::string::npos);
  }
}

}  // namespace
}  // namespace balancenet::device

// A device's default generator saved and restored (device/DeviceRandom.h): the draws after a restore repeat those
// after the save, as dropout masks must after a resume. The CPU's here; tests/gpu/GpuRandomTest.cpp checks a GPU's.
#include "balancenet/device/DeviceRandom.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

namespace balancenet::device {
namespace {

const c10::Device kCpu(c10::DeviceType::CPU);

TEST(DeviceRandom, DrawsAfterARestoreRepeatTheDrawsAfterTheSave) {
  const at::Tensor saved = generatorState(kCpu);
  EXPECT_EQ(saved.device(), kCpu);
  EXPECT_EQ(saved.scalar_type(), at::kByte);
  const at::Tensor mask = at::bernoulli(at::full({256}, 0.5));
  at::rand({1000});  // the generator moves on
  restoreGeneratorState(kCpu, saved);
  EXPECT_TRUE(at::equal(at::bernoulli(at::full({256}, 0.5)), mask));
}

TEST(DeviceRandom, AnUndefinedStateLeavesTheGeneratorAsItIs) {
  const at::Tensor saved = generatorState(kCpu);
  const at::Tensor next = at::rand({8});
  restoreGeneratorState(kCpu, saved);
  restoreGeneratorState(kCpu, at::Tensor());
  EXPECT_TRUE(at::equal(at::rand({8}), next));
}

}  // namespace
}  // namespace balancenet::device

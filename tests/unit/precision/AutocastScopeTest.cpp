// The scope turns libtorch's autocast on for its lifetime only, in the type asked, and puts back what was there.
#include "balancenet/precision/AutocastScope.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

namespace balancenet::precision {
namespace {

const auto kCpu = c10::DeviceType::CPU;

at::ScalarType productType() { return at::matmul(at::ones({4, 4}), at::ones({4, 4})).scalar_type(); }

TEST(AutocastScope, ProductsRunInTheLowTypeInsideAndInFloatAfter) {
  for (Precision p : {Precision::Bf16, Precision::Fp16}) {
    SCOPED_TRACE(precisionName(p));
    {
      AutocastScope scope(p, kCpu);
      EXPECT_TRUE(at::autocast::is_autocast_enabled(kCpu));
      EXPECT_EQ(productType(), lowType(p));
    }
    EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu));
    EXPECT_EQ(productType(), at::kFloat);
  }
}

TEST(AutocastScope, Fp32LeavesAutocastAsItFoundIt) {
  {
    AutocastScope scope(Precision::Fp32, kCpu);
    EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu));
    EXPECT_EQ(productType(), at::kFloat);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu));
}

TEST(AutocastScope, AnInnerScopePutsBackTheOutersType) {
  AutocastScope outer(Precision::Bf16, kCpu);
  {
    AutocastScope inner(Precision::Fp16, kCpu);
    EXPECT_EQ(productType(), at::kHalf);
  }
  EXPECT_TRUE(at::autocast::is_autocast_enabled(kCpu));
  EXPECT_EQ(productType(), at::kBFloat16);
}

}  // namespace
}  // namespace balancenet::precision

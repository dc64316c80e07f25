// --precision's names: each one round-trips, anything else is refused naming the flag.
#include "balancenet/precision/Precision.h"

#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

namespace balancenet::precision {
namespace {

TEST(Precision, EachNameParsesToItsTypeAndBack) {
  const struct {
    const char* name;
    Precision precision;
    c10::ScalarType type;
    bool scales;
  } table[] = {{"fp32", Precision::Fp32, c10::ScalarType::Float, false},
               {"bf16", Precision::Bf16, c10::ScalarType::BFloat16, false},
               {"fp16", Precision::Fp16, c10::ScalarType::Half, true}};
  for (const auto& row : table) {
    SCOPED_TRACE(row.name);
    const Precision p = parsePrecision(row.name);
    EXPECT_EQ(p, row.precision);
    EXPECT_STREQ(precisionName(p), row.name);
    EXPECT_EQ(lowType(p), row.type);
    EXPECT_EQ(scalesLoss(p), row.scales);
  }
}

TEST(Precision, OtherNamesAreRefusedNamingTheFlag) {
  for (const char* bad : {"fp8", "FP16", "", "float16", "bfloat16"}) {
    try {
      parsePrecision(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--precision must be fp32, bf16 or fp16, got '") + bad + "'");
    }
  }
}

}  // namespace
}  // namespace balancenet::precision

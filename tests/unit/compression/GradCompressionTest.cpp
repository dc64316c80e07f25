// --grad-compress's names and wire types.
#include "balancenet/compression/GradCompression.h"

#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

namespace balancenet::compression {
namespace {

TEST(GradCompression, EachNameParsesToItsWireTypeAndBack) {
  const struct {
    const char* name;
    GradCompression compression;
    c10::ScalarType wire;
  } table[] = {{"none", GradCompression::None, c10::ScalarType::Float},
               {"bf16", GradCompression::Bf16, c10::ScalarType::BFloat16},
               {"fp16", GradCompression::Fp16, c10::ScalarType::Half}};
  for (const auto& row : table) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(parseGradCompression(row.name), row.compression);
    EXPECT_STREQ(gradCompressionName(row.compression), row.name);
    EXPECT_EQ(wireType(row.compression), row.wire);
    EXPECT_EQ(compresses(row.compression), row.compression != GradCompression::None);
  }
}

TEST(GradCompression, OtherNamesAreRefusedNamingTheFlag) {
  for (const char* bad : {"powersgd", "int8", "BF16", ""}) {
    try {
      parseGradCompression(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--grad-compress must be none, bf16 or fp16, got '") + bad + "'");
    }
  }
}

}  // namespace
}  // namespace balancenet::compression

// --grad-compress's names, wire types and powersgd's rank.
#include "balancenet/compression/GradCompression.h"

#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

namespace balancenet::compression {
namespace {

TEST(GradCompression, EachNameParsesToItsKindAndBack) {
  const struct {
    const char* name;
    GradCompression compression;
    c10::ScalarType wire;  // a cast's element type; Float for the rest
    int rank;
  } table[] = {{"none", GradCompression::None, c10::ScalarType::Float, 1},
               {"bf16", GradCompression::Bf16, c10::ScalarType::BFloat16, 1},
               {"fp16", GradCompression::Fp16, c10::ScalarType::Half, 1},
               {"int8", GradCompression::Int8, c10::ScalarType::Float, 1},
               {"powersgd", GradCompression::PowerSgd, c10::ScalarType::Float, 1},
               {"powersgd:4", GradCompression::PowerSgd, c10::ScalarType::Float, 4}};
  for (const auto& row : table) {
    SCOPED_TRACE(row.name);
    const auto parsed = parseGradCompression(row.name);
    EXPECT_EQ(parsed.kind, row.compression);
    EXPECT_EQ(parsed.rank, row.rank);
    EXPECT_EQ(parsed.warmupSteps, 0);
    EXPECT_EQ(gradCompressionName(parsed), row.name);
    EXPECT_EQ(wireType(row.compression), row.wire);
    EXPECT_EQ(compresses(parsed), row.compression != GradCompression::None);
    EXPECT_EQ(casts(row.compression), row.wire != c10::ScalarType::Float);
  }
  EXPECT_EQ(gradCompressionName(parseGradCompression("powersgd:1")), "powersgd");  // rank 1 is the default
}

TEST(GradCompression, OtherNamesAreRefusedNamingTheFlag) {
  for (const char* bad : {"int4", "BF16", "", "powersgd2", "sign"}) {
    try {
      parseGradCompression(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(
          std::string(e.what()),
          std::string("--grad-compress must be none, bf16, fp16, int8, powersgd or powersgd:RANK, got '") + bad + "'");
    }
  }
}

TEST(GradCompression, APowerSgdRankBelowOneOrNotANumberIsRefused) {
  for (const char* bad : {"0", "-1", "x", "", "1.5", "99999999"}) {
    try {
      parseGradCompression(std::string("powersgd:") + bad);
      ADD_FAILURE() << "accepted rank '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--grad-compress powersgd:RANK needs a RANK of 1 or more, got '") + bad + "'");
    }
  }
}

}  // namespace
}  // namespace balancenet::compression

// require(): the one check every flag validation uses; a UsageError (exit 2) carrying the message as given.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

namespace balancenet {
namespace {

TEST(Require, PassesWhenTheConditionHolds) { EXPECT_NO_THROW(require(true, "never shown")); }

TEST(Require, ThrowsAUsageErrorWithTheMessageAsGiven) {
  try {
    require(false, "--workers must be at least 1, got 0");
    FAIL() << "require(false, ...) returned";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--workers must be at least 1, got 0");
  }
}

}  // namespace
}  // namespace balancenet

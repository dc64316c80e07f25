// parseInteger / parseFiniteNumber: the whole string or nothing, so every flag and variable parser rejects alike.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "balancenet/core/ParseNumber.h"

namespace balancenet {
namespace {

TEST(ParseInteger, TakesTheWholeString) {
  EXPECT_EQ(parseInteger("42"), 42);
  EXPECT_EQ(parseInteger("-3"), -3);
  EXPECT_EQ(parseInteger("+7"), 7);
  EXPECT_EQ(parseInteger("9000000000"), int64_t{9000000000});  // beyond int: int64_t by default
}

TEST(ParseInteger, RefusesAnythingButOneInteger) {
  for (const char* bad : {"", "-", "4x", "2.5", "1e3", "0x10", "5 ", "abc", "99999999999999999999"})
    EXPECT_FALSE(parseInteger(bad).has_value()) << "'" << bad << "'";
}

TEST(ParseInteger, RefusesValuesOutsideTheTargetType) {
  EXPECT_EQ(parseInteger<int>("2147483647"), std::numeric_limits<int>::max());
  EXPECT_EQ(parseInteger<int>("-2147483648"), std::numeric_limits<int>::min());
  EXPECT_FALSE(parseInteger<int>("2147483648").has_value());  // std::stoi's overflow, kept an error
  EXPECT_FALSE(parseInteger<int>("-2147483649").has_value());
  EXPECT_FALSE(parseInteger<int16_t>("40000").has_value());
}

TEST(ParseFiniteNumber, TakesTheWholeStringAndOnlyFiniteValues) {
  EXPECT_EQ(parseFiniteNumber("2.5"), 2.5);
  EXPECT_EQ(parseFiniteNumber("1e6"), 1e6);
  EXPECT_EQ(parseFiniteNumber("-0.5"), -0.5);
  for (const char* bad : {"", "2x", "nan", "inf", "-inf", "1e999", "1,5"})
    EXPECT_FALSE(parseFiniteNumber(bad).has_value()) << "'" << bad << "'";
}

}  // namespace
}  // namespace balancenet

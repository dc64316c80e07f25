// --global-batch's three forms and their errors; the B a schedule holds at each step.
#include <gtest/gtest.h>

#include "balancenet/adaptive/BatchSizing.h"
#include "balancenet/core/Error.h"

namespace balancenet::adaptive {
namespace {

TEST(BatchSizing, ParsesFixedAutoAndScheduleAndTheirStartingB) {
  int64_t first = 0;
  EXPECT_EQ(parseGlobalBatch("256", first).mode, BatchSizing::Mode::Fixed);
  EXPECT_EQ(first, 256);

  auto s = parseGlobalBatch("auto", first);
  EXPECT_EQ(s.mode, BatchSizing::Mode::Auto);
  EXPECT_EQ(first, 128);
  EXPECT_EQ(s.minBatch, 32);
  EXPECT_EQ(s.maxBatch, 4096);
  s = parseGlobalBatch("auto:64:2048", first);  // starts at 128, the default, inside the range
  EXPECT_EQ(first, 128);
  EXPECT_EQ(s.minBatch, 64);
  EXPECT_EQ(s.largest(), 2048);
  parseGlobalBatch("auto:256:2048", first);  // ... or at the range's end nearest it
  EXPECT_EQ(first, 256);
  s = parseGlobalBatch("auto:16:512:48", first);
  EXPECT_EQ(first, 48);
  EXPECT_EQ(s.startBatch, 48);

  s = parseGlobalBatch("64,128@200,96@400", first);
  EXPECT_EQ(s.mode, BatchSizing::Mode::Schedule);
  EXPECT_EQ(first, 64);
  EXPECT_EQ(s.largest(), 128);
  EXPECT_EQ(scheduledBatch(s.schedule, 0), 64);
  EXPECT_EQ(scheduledBatch(s.schedule, 199), 64);
  EXPECT_EQ(scheduledBatch(s.schedule, 200), 128);
  EXPECT_EQ(scheduledBatch(s.schedule, 10000), 96);
}

TEST(BatchSizing, RefusesMalformedFormsWithOneLine) {
  int64_t first = 0;
  for (const char* bad : {"0", "-3", "abc", "auto:", "auto:64", "auto:0:10", "auto:64:32", "auto:a:b", "auto:8:64:128",
                          "auto:8:64:4:2", "64,128", "64@5", "64,128@0", "64,128@10,256@10", "64,x@10", "64,"}) {
    try {
      parseGlobalBatch(bad, first);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--global-batch"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace balancenet::adaptive

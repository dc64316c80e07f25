// SetupWatchdog: past its deadline the process ends with one error line; disarmed in time, nothing happens.
#include "balancenet/comm/SetupWatchdog.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

namespace balancenet::comm {
namespace {

using namespace std::chrono_literals;

TEST(SetupWatchdogDeathTest, ExpiredDeadlineEndsTheProcessWithOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        SetupWatchdog watchdog(100ms, "the rendezvous of rank 3");
        std::this_thread::sleep_for(30s);  // a call that never returns
      },
      ::testing::ExitedWithCode(1),
      "^balancenet: error: the rendezvous of rank 3 did not finish within 0.1 s: the rendezvous store stopped "
      "answering");
}

TEST(SetupWatchdogDeathTest, DisarmedInTimeLetsTheProcessGoOn) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        { SetupWatchdog watchdog(200ms, "set-up"); }
        std::this_thread::sleep_for(600ms);  // well past the deadline it had
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace balancenet::comm

// FatalError: an exception escaping any thread ends the process with one line naming what it was doing.
#include "balancenet/core/FatalError.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

namespace balancenet {
namespace {

TEST(FatalErrorDeathTest, AnExceptionOnAForeignThreadIsOneLineAndExitCodeOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installFatalErrorHandler();
        FatalErrorContext outer("the rendezvous of rank 1 at 127.0.0.1:29500");
        std::thread([] { throw std::length_error("cannot create std::vector larger than max_size()"); }).join();
      },
      ::testing::ExitedWithCode(1),
      "^balancenet: error: the rendezvous of rank 1 at 127.0.0.1:29500 failed: cannot create std::vector larger "
      "than max_size\\(\\)\n$");
}

TEST(FatalErrorDeathTest, WithoutContextTheLineSaysItWasUnexpected) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installFatalErrorHandler();
        { FatalErrorContext ended("set-up"); }
        std::thread([] { throw std::runtime_error("boom\nbacktrace frame #0"); }).join();
      },
      ::testing::ExitedWithCode(1), "^balancenet: error: unexpected failure: boom\n$");
}

}  // namespace
}  // namespace balancenet

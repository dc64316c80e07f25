// FatalError: an exception escaping any thread ends the process with one line naming what it was doing.
#include "balancenet/core/FatalError.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <thread>

// Out of memory on demand: once set, every operator new of this test binary fails.
std::atomic<bool> gFailAllocations{false};

void* operator new(std::size_t size) {
  if (gFailAllocations) throw std::bad_alloc();
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
// GCC sees free() on what it takes for operator new's memory; here operator new is malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

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

TEST(FatalErrorDeathTest, AContextThatKnowsTheCauseNamesIt) {
  // c10d's store client thread throws when the store's host closes the connection mid-rendezvous.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installFatalErrorHandler();
        FatalErrorContext outer("checking the job's store at 127.0.0.1:29500",
                                "the job's store at 127.0.0.1:29500 stopped answering");
        std::thread([] { throw std::runtime_error("Connection reset by peer"); }).join();
      },
      ::testing::ExitedWithCode(1),
      "^balancenet: error: checking the job's store at 127.0.0.1:29500 failed: the job's store at 127.0.0.1:29500 "
      "stopped answering: Connection reset by peer\n$");
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

// The handler is there for failures like running out of memory: it must not allocate (an allocation
// there throws again and aborts with a core dump instead of the one line).
TEST(FatalErrorDeathTest, OutOfMemoryIsStillOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installFatalErrorHandler();
        FatalErrorContext step("step 7 of rank 0");
        std::thread([] {
          gFailAllocations = true;
          throw std::bad_alloc();
        }).join();
      },
      ::testing::ExitedWithCode(1), "^balancenet: error: step 7 of rank 0 failed: std::bad_alloc\n$");
}

}  // namespace
}  // namespace balancenet

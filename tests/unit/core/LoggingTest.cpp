// Logging: the one sink is safe to share between the training thread and the monitor's.
#include "balancenet/core/Logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "balancenet/core/Error.h"

namespace balancenet {
namespace {

TEST(Logging, EverySinkOfTheDefaultLoggerLocksAgainstOtherThreads) {
  // A single-threaded sink (null mutex) formats and writes unguarded: the monitor thread logging while
  // the trainer does is a data race (seen at --log-level debug).
  setupLogging("debug");
  const auto& sinks = spdlog::default_logger()->sinks();
  ASSERT_FALSE(sinks.empty());
  for (const auto& sink : sinks) {
    EXPECT_EQ(std::dynamic_pointer_cast<spdlog::sinks::stderr_sink_st>(sink), nullptr);
    EXPECT_NE(std::dynamic_pointer_cast<spdlog::sinks::stderr_sink_mt>(sink), nullptr);
  }
  setupLogging("info");
}

TEST(Logging, AnUnknownLevelIsAUsageError) { EXPECT_THROW(setupLogging("verbose"), UsageError); }

}  // namespace
}  // namespace balancenet

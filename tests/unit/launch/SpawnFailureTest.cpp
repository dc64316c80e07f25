// The local launcher when fork fails: one error naming the worker and fork's own errno, and the worker's pipe
// closed. (A fork failing after workers started: ForkLimit.AWorkerThatCannotStartStopsTheOnesStartedWithOneLine.)
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/launch/LocalLauncher.h"
#include "testing/SyntheticData.h"
#include "testing/SyscallFaults.h"
#include "testing/TempDir.h"

namespace balancenet::launch {
using cli::parseTrainCommandLine;
namespace {

// Launches one worker with fork failing (EAGAIN: the process limit) and returns the error.
std::string launchWithForkFailing(const testing::TempDir& dir) {
  const auto c = parseTrainCommandLine({"--workers", "1", "--data-dir", dir.file("data"), "--run-dir", dir.file("run"),
                                        "--steps", "1", "--global-batch", "8"});
  // The launcher catches Ctrl-C and SIGTERM for its workers' sake; this test process gets its own back.
  struct sigaction interrupt {
  }, terminate{};
  ::sigaction(SIGINT, nullptr, &interrupt);
  ::sigaction(SIGTERM, nullptr, &terminate);
  testing::failNext(testing::Syscall::Fork, EAGAIN);
  std::string error = "(no error)";
  try {
    launchLocalWorkers(c);
  } catch (const RuntimeFailure& e) {
    error = e.what();
  }
  ::sigaction(SIGINT, &interrupt, nullptr);
  ::sigaction(SIGTERM, &terminate, nullptr);
  return error;
}

TEST(LocalLauncher, AFailedForkClosesTheWorkersPipeAndNamesTheError) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("data"));
  testing::writeSyntheticMnistDir(dir.file("data"), 64, 32);
  // A first launch opens what stays open for good (the loggers' files, the dataset's readers' caches).
  const std::string error = std::string("could not start worker rank 0: fork: ") + std::strerror(EAGAIN);
  EXPECT_EQ(launchWithForkFailing(dir), error);
  const int before = testing::openDescriptors();
  EXPECT_EQ(launchWithForkFailing(dir), error);
  EXPECT_EQ(testing::openDescriptors(), before) << "the pipe's two ends leaked";
}

}  // namespace
}  // namespace balancenet::launch

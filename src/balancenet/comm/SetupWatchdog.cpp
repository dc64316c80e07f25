// The watchdog thread sleeps until disarmed or the deadline; only write() and _exit() follow the deadline,
// so a stuck thread holding any lock (spdlog's, iostream's) cannot keep the process alive.
#include "balancenet/comm/SetupWatchdog.h"

#include <unistd.h>

#include <fmt/format.h>

namespace balancenet::comm {

SetupWatchdog::SetupWatchdog(std::chrono::milliseconds limit, std::string what, std::string storeLost)
    : context_(what, std::move(storeLost)) {
  const std::string message = fmt::format(
      "balancenet: error: {} did not finish within {} s: the rendezvous store stopped answering (did something "
      "other than balancenet connect to its port?)\n",
      what, limit.count() / 1000.0);
  thread_ = std::thread([this, limit, message] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (disarmed_.wait_for(lock, limit, [this] { return done_; })) return;
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(1);
  });
}

SetupWatchdog::~SetupWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  disarmed_.notify_all();
  thread_.join();
}

}  // namespace balancenet::comm

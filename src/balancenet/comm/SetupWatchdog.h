// SetupWatchdog: a deadline for set-up calls that may block with no timeout of their own.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "balancenet/core/FatalError.h"

namespace balancenet::comm {

// c10d's TCPStore client waits forever for some answers (check, add, its constructor's ping): a store
// that stops answering, or a port held by something else, could stall a rendezvous for good. No thread
// can be cancelled out of that recv, so when the deadline passes the
// process prints one error line naming `what` and exits with code 1. Disarmed when destroyed. While it
// lives, `what` also names an exception escaping one of c10d's threads (see core/FatalError.h).
class SetupWatchdog {
 public:
  // `storeLost`: what an exception on c10d's client thread means while this set-up runs (it only reads the
  // store's replies, so: the connection to the store is gone or garbled).
  SetupWatchdog(std::chrono::milliseconds limit, std::string what, std::string storeLost = {});
  ~SetupWatchdog();
  SetupWatchdog(const SetupWatchdog&) = delete;
  SetupWatchdog& operator=(const SetupWatchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable disarmed_;
  bool done_ = false;
  std::thread thread_;
  FatalErrorContext context_;
};

}  // namespace balancenet::comm

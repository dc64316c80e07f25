// PendingWork: a collective or message in flight, whoever started it (Communicator over c10d; a test's fake returns
// empty ones, already done). Its own file so that what waits on work needs neither c10d nor the Communicator.
#pragma once
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/LinkModel.h"

namespace balancenet {
class Timeline;
}
namespace c10d {
class Work;
}

namespace balancenet::comm {

// A collective in flight. wait() returns once it is done everywhere (and, under an emulated link,
// once the link would have delivered it); a c10d failure surfaces there as RuntimeFailure.
class PendingWork {
 public:
  PendingWork();
  // `hasFuture`: the work supports getFuture() (Gloo's collectives do; its send and recv do not, and
  // asking them throws a c10::Error whose symbolised backtrace costs milliseconds). Without one, the
  // operation's end is taken as when wait() returned.
  PendingWork(c10::intrusive_ptr<c10d::Work> work, LinkModel::Clock::time_point deliveredAt, std::string what, int rank,
              bool hasFuture = true);
  PendingWork(PendingWork&&) noexcept;
  PendingWork& operator=(PendingWork&&) noexcept;
  ~PendingWork();
  bool valid() const;
  void wait();
  // wait(), drawn on `timeline` (when not null): the wait as `waitName` on the compute lane, and the
  // operation itself, from its start to its delivery, as `messageName` on the communication lane.
  void wait(Timeline* timeline, const std::string& waitName, const std::string& messageName);
  // Runs `done` once wait() has returned (a receive through a host copy copies it into its GPU tensor there).
  void thenOnWait(std::function<void()> done) { onWait_ = std::move(done); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::shared_ptr<std::atomic<int64_t>> completedNs_;  // set by the work's completion callback
  LinkModel::Clock::time_point startedAt_;
  LinkModel::Clock::time_point deliveredAt_;
  LinkModel::Clock::time_point finishedAt_;  // after wait(): really finished, emulated link included
  std::string what_;
  int rank_ = 0;
  std::function<void()> onWait_;
};

// A c10d failure (peer died, timeout) as one line naming the operation and the rank: callers never see c10's
// multi-line backtraces.
[[noreturn]] void rethrowAsFailure(const char* what, int rank, const std::exception& e);

}  // namespace balancenet::comm

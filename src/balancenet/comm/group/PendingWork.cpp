// PendingWork over c10d::Work: the wait, the emulated link's delivery time, and the work's own end for the timeline.
#include "balancenet/comm/group/PendingWork.h"

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <algorithm>
#include <thread>
#include <utility>

#include <ATen/core/ivalue.h>
#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Timeline.h"

namespace balancenet::comm {

void rethrowAsFailure(const char* what, int rank, const std::exception& e) {
  throw RuntimeFailure(
      fmt::format("{} failed on rank {} (a peer died or the network broke): {}", what, rank, firstLine(e.what())));
}

PendingWork::PendingWork() = default;
PendingWork::PendingWork(c10::intrusive_ptr<c10d::Work> work, LinkModel::Clock::time_point deliveredAt,
                         std::string what, int rank, bool hasFuture)
    : work_(std::move(work)),
      completedNs_(hasFuture ? std::make_shared<std::atomic<int64_t>>(0) : nullptr),
      startedAt_(LinkModel::Clock::now()),
      deliveredAt_(deliveredAt),
      what_(std::move(what)),
      rank_(rank) {
  if (!completedNs_) return;
  try {
    auto done = completedNs_;
    work_->getFuture()->addCallback(
        [done](c10::ivalue::Future&) { done->store(LinkModel::Clock::now().time_since_epoch().count()); });
  } catch (const std::exception&) {
    completedNs_.reset();  // no future after all: finishedAt() falls back to when wait() returned
  }
}
PendingWork::PendingWork(PendingWork&&) noexcept = default;
PendingWork& PendingWork::operator=(PendingWork&&) noexcept = default;
PendingWork::~PendingWork() = default;

bool PendingWork::valid() const { return static_cast<bool>(work_); }

void PendingWork::wait() {
  if (!work_) return;
  try {
    work_->wait();
  } catch (const std::exception& e) {
    work_.reset();
    rethrowAsFailure(what_.c_str(), rank_, e);
  }
  work_.reset();
  if (onWait_) std::exchange(onWait_, nullptr)();
  const int64_t completed = completedNs_ ? completedNs_->load() : 0;
  const auto realEnd =
      completed > 0 ? LinkModel::Clock::time_point(LinkModel::Clock::duration(completed)) : LinkModel::Clock::now();
  std::this_thread::sleep_until(deliveredAt_);
  finishedAt_ = std::max(realEnd, deliveredAt_);
}

void PendingWork::wait(Timeline* timeline, const std::string& waitName, const std::string& messageName) {
  const bool started = valid();  // an empty one (a one-rank sum) moved nothing to draw
  {
    Timeline::Span span(timeline, waitName, "sync");
    wait();
  }
  if (timeline && started) timeline->record(messageName, "comm", Timeline::kCommunication, startedAt_, finishedAt_);
}

}  // namespace balancenet::comm

// The step clock's arithmetic.
#include "balancenet/session/StepClock.h"

#include <algorithm>

namespace balancenet::session {

namespace {
int64_t nanos(StepClock::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
}  // namespace

void StepClock::begin(Clock::time_point t) {
  running_ = true;
  begin_ = lastBackward_ = t;
  syncOpen_ = anyBackward_ = false;
  lastReducedNs_.store(nanos(t));
  syncMs_ = syncBeforeLastBackwardMs_ = dataMs_ = 0;
}

void StepClock::closeSyncWindow() {
  if (!syncOpen_) return;
  syncOpen_ = false;
  const int64_t waited = lastReducedNs_.load() - nanos(lastBackward_);
  syncMs_ += std::max<int64_t>(waited, 0) / 1e6;
}

void StepClock::backwardDone(Clock::time_point t) {
  closeSyncWindow();
  syncBeforeLastBackwardMs_ = syncMs_;
  lastBackward_ = t;
  syncOpen_ = anyBackward_ = true;
}

void StepClock::reduced(Clock::time_point t) {
  // The latest completion wins; a late callback of an earlier bucket must not move it back.
  const int64_t ns = nanos(t);
  int64_t seen = lastReducedNs_.load();
  while (ns > seen && !lastReducedNs_.compare_exchange_weak(seen, ns)) {
  }
}

double StepClock::computeMsAt(Clock::time_point t) const { return ms(t - begin_) - syncMs_; }

StepTimes StepClock::end(Clock::time_point t) {
  closeSyncWindow();
  running_ = false;
  StepTimes times;
  times.updateMs = ms(t - begin_);
  times.syncMs = syncMs_;
  // Without a reported backward (no comm hook) the whole step counts as compute.
  times.computeMs = anyBackward_ ? ms(lastBackward_ - begin_) - syncBeforeLastBackwardMs_ : times.updateMs;
  times.dataMs = dataMs_;
  return times;
}

}  // namespace balancenet::session

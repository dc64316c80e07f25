// StepClock: where the time of one step of a loop someone else drives went (compute, data loading, waiting for
// the gradient sync), from the events that loop reports, measured as the C++ trainer measures its own steps.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>

namespace balancenet::session {

struct StepTimes {
  double computeMs = 0;  // the step's start to its last backward done, less the syncs waited on before it
  double syncMs = 0;     // after each backward, waiting for its gradient all-reduces to complete
  double updateMs = 0;   // the step's start to its end (the optimiser done)
  double dataMs = 0;     // reading the step's batches (part of computeMs)
};

// A step may hold several batches (gradient accumulation): each backward closes a sync window that the next
// backward or the end of the step measures. reduced() may come from any thread (Gloo's); the rest from the
// loop's thread.
class StepClock {
 public:
  using Clock = std::chrono::steady_clock;

  void begin(Clock::time_point t);
  bool running() const { return running_; }
  // The step is abandoned (its group failed): the next begin() starts afresh.
  void abandon() { running_ = false; }
  void dataLoaded(double ms) { dataMs_ += ms; }
  // The last gradient bucket of a backward is ready: its sync starts.
  void backwardDone(Clock::time_point t);
  // One of the backward's all-reduces completed.
  void reduced(Clock::time_point t);
  // Compute so far in this step: its start to `t`, less the syncs waited on.
  double computeMsAt(Clock::time_point t) const;
  StepTimes end(Clock::time_point t);

 private:
  void closeSyncWindow();
  static double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

  bool running_ = false;
  Clock::time_point begin_{};
  Clock::time_point lastBackward_{};
  bool syncOpen_ = false;  // a backward is done whose sync window is not closed yet
  bool anyBackward_ = false;
  std::atomic<int64_t> lastReducedNs_{0};  // Clock's ticks since its epoch, in ns
  double syncMs_ = 0;
  double syncBeforeLastBackwardMs_ = 0;
  double dataMs_ = 0;
};

}  // namespace balancenet::session

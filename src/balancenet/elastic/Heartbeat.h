// Heartbeat: every worker tells the job store, several times a second, that it is alive and which
// step it is in, so that a peer whose collective failed or stalled can name who is missing.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
}

namespace balancenet::elastic {

constexpr std::chrono::milliseconds kHeartbeatEvery{200};

// What the store last heard from one member.
struct Beat {
  int64_t step = 0;       // the step it was in (steps completed)
  double secondsAgo = 0;  // since its last beat (wall clocks: hosts of one job are assumed in sync)
  std::string host;       // the member's host address (empty: a job on one machine)
};

// Writes `elastic/hb/<member>` = "<step> <unix ms> [<host>]" from its own thread until destroyed. A store
// that went away (the launcher ended) ends the thread quietly: it must never take the worker down.
class Heartbeat {
 public:
  // `host`: this member's address, so that a peer can say where a missing member ran (empty: one machine).
  Heartbeat(c10::intrusive_ptr<c10d::Store> store, int member, std::string host = "");
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // Beats at once when the step changes, so a peer that stops right after it is reported at that step.
  void setStep(int64_t step);
  int64_t step() const { return step_; }

 private:
  void run();
  bool beat();  // false when the store is gone

  c10::intrusive_ptr<c10d::Store> store_;
  const int member_;
  const std::string host_;
  std::atomic<int64_t> step_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// The member's last beat, or nothing when it never beat.
std::optional<Beat> readBeat(c10d::Store& store, int member);

}  // namespace balancenet::elastic

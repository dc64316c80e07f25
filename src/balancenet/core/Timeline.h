// Timeline: spans of work (forward, backward, each bucket's all-reduce...) recorded per rank and lane,
// written as a Chrome trace that chrome://tracing and Perfetto open, like Horovod's timeline.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace balancenet {

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;
  // Lanes are the rows a rank's spans are drawn in ("tid" in the trace).
  enum Lane : int { kCompute = 0, kCommunication = 1 };

  explicit Timeline(int rank) : rank_(rank) {}

  // Thread-safe: hooks and communication threads record too.
  void record(const std::string& name, const char* category, int lane, Clock::time_point start, Clock::time_point end);
  size_t size() const;

  // The trace events of this rank as a JSON array (timestamps in microseconds of the steady clock,
  // comparable between processes of one machine), with metadata naming the rank and its lanes.
  std::string eventsJson() const;
  // Merges ranks' eventsJson() into one trace document, shifted so the earliest event is at 0.
  static std::string mergeTraces(const std::vector<std::string>& rankEvents);

  // Records [construction, destruction) when given a timeline; a null timeline costs nothing.
  class Span {
   public:
    Span(Timeline* timeline, std::string name, const char* category, int lane = kCompute)
        : timeline_(timeline),
          name_(timeline ? std::move(name) : std::string()),
          category_(category),
          lane_(lane),
          start_(timeline ? Clock::now() : Clock::time_point()) {}
    ~Span() {
      if (timeline_) timeline_->record(name_, category_, lane_, start_, Clock::now());
    }
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;

   private:
    Timeline* timeline_;
    std::string name_;
    const char* category_;
    int lane_;
    Clock::time_point start_;
  };

 private:
  struct Event {
    std::string name;
    const char* category;
    int lane;
    int64_t startUs;
    int64_t durationUs;
  };
  int rank_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

}  // namespace balancenet

// Chrome trace format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
// ("X" complete events, "M" metadata events naming processes and threads).
#include "balancenet/core/Timeline.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

namespace balancenet {
namespace {

int64_t micros(Timeline::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

void Timeline::record(const std::string& name, const char* category, int lane, Clock::time_point start,
                      Clock::time_point end) {
  Event e{name, category, lane, micros(start), std::max<int64_t>(0, micros(end) - micros(start))};
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(e));
}

size_t Timeline::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

std::string Timeline::eventsJson() const {
  nlohmann::json out = nlohmann::json::array();
  out.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", rank_}, {"args", {{"name", "rank " + std::to_string(rank_)}}}});
  out.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", rank_}, {"args", {{"sort_index", rank_}}}});
  const char* laneNames[] = {"compute", "communication"};
  for (int lane : {kCompute, kCommunication})
    out.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", rank_}, {"tid", lane}, {"args", {{"name", laneNames[lane]}}}});
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& e : events_)
    out.push_back({{"name", e.name},
                   {"cat", e.category},
                   {"ph", "X"},
                   {"pid", rank_},
                   {"tid", e.lane},
                   {"ts", e.startUs},
                   {"dur", e.durationUs}});
  return out.dump();
}

std::string Timeline::mergeTraces(const std::vector<std::string>& rankEvents) {
  nlohmann::json events = nlohmann::json::array();
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto& text : rankEvents)
    for (auto& e : nlohmann::json::parse(text)) {
      if (e.contains("ts")) origin = std::min(origin, e["ts"].get<int64_t>());
      events.push_back(std::move(e));
    }
  for (auto& e : events)
    if (e.contains("ts")) e["ts"] = e["ts"].get<int64_t>() - origin;
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace balancenet

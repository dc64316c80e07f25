// Naming the missing ranks from the heartbeats in the store.
#include "balancenet/elastic/StallReport.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/elastic/Heartbeat.h"

namespace balancenet::elastic {
namespace {

// Where a member ran, when the job spans hosts: " at 10.0.0.3".
std::string at(const std::string& host) { return host.empty() ? "" : " at " + host; }

}  // namespace

std::vector<int> staleMembers(c10d::Store& store, const std::vector<int>& members) {
  std::vector<int> stale;
  for (int m : members) {
    auto beat = readBeat(store, m);
    if (!beat || beat->secondsAgo * 1000 > kStaleAfter.count()) stale.push_back(m);
  }
  return stale;
}

std::string describeMissing(c10d::Store& store, const std::vector<int>& members, int self, int64_t step,
                            const std::string& failure) {
  std::vector<int> others;
  for (int m : members)
    if (m != self) others.push_back(m);
  try {
    // A peer killed a moment ago still has a fresh beat: give it time to age.
    const auto deadline = std::chrono::steady_clock::now() + kStaleAfter + std::chrono::seconds(1);
    auto stale = staleMembers(store, others);
    while (stale.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      stale = staleMembers(store, others);
    }
    std::vector<std::string> parts;
    for (int m : stale) {
      auto beat = readBeat(store, m);
      parts.push_back(beat ? fmt::format("rank {}{} has not contributed for {:.1f} s (last at step {})", m,
                                         at(beat->host), beat->secondsAgo, beat->step)
                           : fmt::format("rank {} never reported", m));
    }
    if (parts.empty())
      for (int m : others) {
        auto beat = readBeat(store, m);
        if (beat && beat->step < step) parts.push_back(fmt::format("rank {} is still at step {}", m, beat->step));
      }
    if (!parts.empty()) return fmt::format("step {}: {}", step, fmt::join(parts, "; "));
  } catch (const std::exception& e) {
    return fmt::format("step {}: the job store is unreachable ({}); the collective failed: {}", step,
                       firstLine(e.what()), firstLine(failure));
  }
  return fmt::format("step {}: {}", step, firstLine(failure));  // every peer alive: not a stall
}

}  // namespace balancenet::elastic

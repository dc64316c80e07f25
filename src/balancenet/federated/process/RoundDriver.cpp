// The two ways a federated run's rounds go: synchronous, and fedbuff's buffered asynchronous rounds.
#include "balancenet/federated/process/RoundDriver.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "balancenet/core/Stopwatch.h"
#include "balancenet/federated/UpdateCheck.h"

namespace balancenet::federated {
namespace {

using Clock = std::chrono::steady_clock;

class SynchronousRounds : public RoundDriver {
 public:
  explicit SynchronousRounds(double maxUpdateNorm) : maxUpdateNorm_(maxUpdateNorm) {}

  void run(RoundServer& s) override {
    while (s.goesOn(s.round())) runRound(s);
  }

 private:
  void runRound(RoundServer& s) {
    const auto start = Clock::now();
    s.admitRejoined();
    if (!s.anyAlive()) s.awaitSomeClient();
    const int64_t round = s.round();
    RoundRecord record;
    record.round = round;
    std::map<int, ClientRoundRecord> lines;  // one per client, in client order
    for (int c = 0; c < s.clients(); ++c) {
      lines[c].client = c;
      lines[c].status = s.alive(c) ? "skipped" : "dead";
    }
    for (const auto& task : s.sendTasks(round, record)) lines[task.client].assignedSteps = task.localSteps;
    std::vector<Returned> returned;
    std::vector<ClientRoundRecord> lost;
    while (s.tasksOut() > 0) {
      s.collect(returned, lost);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::vector<ClientUpdate> updates = acceptedInClientOrder(s, round, returned, lines, record);
    for (const auto& l : lost) lines[l.client] = l;
    if (updates.empty())
      spdlog::warn("round {}: no update was accepted; the global model stays as it was", round);
    else
      s.aggregate(updates);
    for (const auto& [c, line] : lines) record.clients.push_back(line);
    record.roundSeconds = secondsSince(start);
    s.endRound(std::move(record), round + 1);
  }

  // The updates that count, each checked against the round's others, and every answer's line and evaluation.
  // In client order, not arrival order: the aggregation's float sums, and so a resumed run, are then exact.
  std::vector<ClientUpdate> acceptedInClientOrder(RoundServer& s, int64_t round, std::vector<Returned>& returned,
                                                  std::map<int, ClientRoundRecord>& lines, RoundRecord& record) const {
    std::sort(returned.begin(), returned.end(),
              [](const Returned& a, const Returned& b) { return a.update.client < b.update.client; });
    std::vector<at::Tensor> deltas;
    for (const auto& r : returned) deltas.push_back(r.update.delta);
    const auto rejections = roundRejections(deltas, s.modelSize(), maxUpdateNorm_);
    std::vector<ClientUpdate> updates;
    for (size_t i = 0; i < returned.size(); ++i) {
      auto& r = returned[i];
      if (s.accepted(r, round, rejections[i])) updates.push_back(r.update);
      lines[r.update.client] = r.record;
      if (r.evaluation) record.clientEvaluations.push_back(*r.evaluation);
    }
    return updates;
  }

  const double maxUpdateNorm_;
};

class BufferedRounds : public RoundDriver {
 public:
  BufferedRounds(int buffer, double maxUpdateNorm)
      : buffer_(static_cast<size_t>(std::max(1, buffer))), maxUpdateNorm_(maxUpdateNorm) {}

  void run(RoundServer& s) override {
    roundStart_ = Clock::now();
    while (s.goesOn(s.version())) {
      s.admitRejoined();
      if (!s.anyAlive() && s.tasksOut() == 0) s.awaitSomeClient();
      s.sendTasks(s.version(), record_);  // every idle client gets one
      std::vector<Returned> returned;
      std::vector<ClientRoundRecord> lost;
      s.collect(returned, lost);
      take(s, returned);
      record_.clients.insert(record_.clients.end(), lost.begin(), lost.end());
      if (updates_.size() < buffer_) {
        if (returned.empty() && lost.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      aggregateTheBuffer(s);
    }
  }

 private:
  // Each answer's line; the accepted updates into the buffer. No rounds here: an update's norm is compared with
  // the recently accepted ones'.
  void take(RoundServer& s, std::vector<Returned>& returned) {
    for (auto& r : returned) {
      if (s.accepted(r, s.version(), rejectionReason(r.update.delta, s.modelSize(), recentNorms_, maxUpdateNorm_))) {
        rememberNorm(recentNorms_, updateNorm(r.update.delta));
        updates_.push_back(r.update);
        lineOf_.push_back(record_.clients.size());
      }
      record_.clients.push_back(r.record);
    }
  }

  // One aggregation of the buffer, recorded as a round with each update's staleness.
  void aggregateTheBuffer(RoundServer& s) {
    for (size_t i = 0; i < updates_.size(); ++i)
      record_.clients[lineOf_[i]].staleness = s.version() - updates_[i].baseVersion;
    record_.round = s.version();
    s.aggregate(updates_);
    updates_.clear();
    lineOf_.clear();
    record_.roundSeconds = secondsSince(roundStart_);
    roundStart_ = Clock::now();
    s.endRound(std::move(record_), s.version());
    record_ = RoundRecord{};
  }

  const size_t buffer_;
  const double maxUpdateNorm_;
  std::vector<ClientUpdate> updates_;
  std::vector<size_t> lineOf_;  // updates_[i]'s line in record_.clients
  RoundRecord record_;
  Clock::time_point roundStart_;
  std::vector<double> recentNorms_;  // the last accepted updates' norms, for UpdateCheck
};

}  // namespace

std::unique_ptr<RoundDriver> synchronousRounds(double maxUpdateNorm) {
  return std::make_unique<SynchronousRounds>(maxUpdateNorm);
}

std::unique_ptr<RoundDriver> bufferedRounds(int buffer, double maxUpdateNorm) {
  return std::make_unique<BufferedRounds>(buffer, maxUpdateNorm);
}

}  // namespace balancenet::federated

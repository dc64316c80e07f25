// NodeMonitor: one thread interleaving memory samples and collective link rounds on its own timers.
#include "balancenet/monitor/NodeMonitor.h"

#include <algorithm>
#include <exception>

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/LatencyProbe.h"
#include "balancenet/metrics/ResourceProbe.h"

namespace balancenet::monitor {

using Clock = std::chrono::steady_clock;

NodeMonitor::NodeMonitor(std::unique_ptr<comm::Communicator> probe) : NodeMonitor(std::move(probe), Options{}) {}

NodeMonitor::NodeMonitor(std::unique_ptr<comm::Communicator> probe, Options options)
    : probe_(std::move(probe)), options_(options) {
  sampleMemory();  // a snapshot taken right after construction already has memory figures
  thread_ = std::thread([this] { run(); });
}

NodeMonitor::~NodeMonitor() { stop(); }

NodeSnapshot NodeMonitor::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_;
}

void NodeMonitor::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopRequested_ = true;
  }
  wake_.notify_all();
  std::lock_guard<std::mutex> join(joinMutex_);
  if (thread_.joinable()) thread_.join();
}

void NodeMonitor::sampleMemory() {
  const double resident = metrics::residentBytes();
  const double total = metrics::nodeMemoryTotalBytes();
  const double available = metrics::nodeMemoryAvailableBytes();
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot_.residentBytes = resident;
  snapshot_.memoryTotalBytes = total;
  snapshot_.memoryAvailableBytes = available;
}

bool NodeMonitor::linkRound(bool wantStop) {
  try {
    // [stop wanted, bandwidth due]: the bandwidth is measured only when every rank's budget allows it, so
    // the rank that saw it take longest (the slow link's) sets the pace.
    const bool bandwidthDue = Clock::now() >= nextBandwidth_;
    auto flags = at::tensor({wantStop ? 1.0f : 0.0f, bandwidthDue ? 1.0f : 0.0f}, at::kFloat);
    probe_->allreduceSum(flags);
    if (flags[0].item<float>() > 0) return false;  // somebody stops: everybody leaves together
    const bool withBandwidth = flags[1].item<float>() >= static_cast<float>(probe_->size());
    const auto start = Clock::now();
    const auto links = comm::probeLinks(*probe_, options_.repeats, withBandwidth, options_.probeSelection);
    if (withBandwidth && options_.bandwidthShare > 0)
      nextBandwidth_ =
          Clock::now() + std::chrono::duration_cast<Clock::duration>((Clock::now() - start) / options_.bandwidthShare);
    std::lock_guard<std::mutex> lock(mutex_);
    snapshot_.latencyMs = links.latencyMs;
    snapshot_.latencyPeers = links.peers;
    if (withBandwidth) {
      snapshot_.bandwidthBytesPerSecond = links.bandwidthBytesPerSecond;
      ++snapshot_.bandwidthRounds;
    }
    ++snapshot_.probeRounds;
    return true;
  } catch (const std::exception& e) {
    spdlog::debug("monitor: link probing ends: {}", e.what());
    return false;
  }
}

void NodeMonitor::run() {
  try {
    bool probing = probe_ != nullptr;
    auto nextMemory = Clock::now() + options_.memoryEvery;
    auto nextLinks = Clock::now();  // the first round right away
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      if (stopRequested_ && !probing) break;
      // A stop request goes to the all-reduce at once, so the peers waiting in it are released.
      if (probing && (stopRequested_ || Clock::now() >= nextLinks)) {
        const bool wantStop = stopRequested_;
        lock.unlock();
        probing = linkRound(wantStop);
        lock.lock();
        nextLinks = Clock::now() + options_.linksEvery;
        continue;
      }
      if (Clock::now() >= nextMemory) {
        lock.unlock();
        sampleMemory();
        lock.lock();
        nextMemory = Clock::now() + options_.memoryEvery;
        continue;
      }
      const auto wakeAt = probing ? std::min(nextMemory, nextLinks) : nextMemory;
      wake_.wait_until(lock, wakeAt, [this] { return stopRequested_; });
    }
  } catch (const std::exception& e) {
    spdlog::debug("monitor: sampling ends: {}", e.what());
  } catch (...) {
    spdlog::debug("monitor: sampling ends on an unknown error");
  }
}

}  // namespace balancenet::monitor

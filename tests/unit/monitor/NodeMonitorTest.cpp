// Tests of NodeMonitor on thread ranks: live latencies, collective stop, dead peers, memory-only mode.
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/monitor/NodeMonitor.h"
#include "testing/ThreadRanks.h"

namespace balancenet::monitor {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The probe communicator: a second group of the same ranks, over the training group's store.
std::unique_ptr<comm::Communicator> probeGroup(comm::Communicator& training,
                                               milliseconds timeout = milliseconds(30000)) {
  auto store = c10::intrusive_ptr<c10d::Store>::unsafe_reclaim_from_nonowning(&training.store());
  return comm::joinGroupUnder(comm::kProbeGroupPrefix, store, training.rank(), training.size(), timeout);
}

// Polls until the monitor completed a link round, or `limit` passed.
NodeSnapshot waitForRound(const NodeMonitor& monitor, milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  NodeSnapshot s = monitor.snapshot();
  while (s.probeRounds < 1 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    s = monitor.snapshot();
  }
  return s;
}

TEST(NodeMonitor, SnapshotHasLatenciesForAllPeersWhileTrainingCollectivesRun) {
  testing::runRanks(3, [](comm::Communicator& training) {
    NodeMonitor monitor(probeGroup(training));
    const auto start = Clock::now();
    // Training keeps all-reducing meanwhile; every rank leaves the loop in the same iteration.
    NodeSnapshot s;
    int64_t iterations = 0;
    while (true) {
      s = monitor.snapshot();
      const bool done = s.probeRounds >= 1 || secondsSince(start) > 3.0;
      auto t = at::tensor({1.0f, done ? 1.0f : 0.0f});
      training.allreduceSum(t);
      ASSERT_EQ(t[0].item<float>(), 3.0f) << "a training all-reduce was corrupted";
      ++iterations;
      if (t[1].item<float>() == 3.0f) break;
    }
    EXPECT_GT(iterations, 0);
    EXPECT_LT(secondsSince(start), 3.5);
    ASSERT_GE(s.probeRounds, 1);
    ASSERT_EQ(s.latencyMs.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      if (r == training.rank())
        EXPECT_EQ(s.latencyMs[r], 0.0);
      else
        EXPECT_GT(s.latencyMs[r], 0.0);
    }
    EXPECT_GT(s.bandwidthBytesPerSecond, 0.0);
    EXPECT_GT(s.residentBytes, 0.0);
    EXPECT_GT(s.memoryTotalBytes, s.memoryAvailableBytes);
    monitor.stop();
  });
}

TEST(NodeMonitor, StaggeredStopsReturnQuicklyOnAllRanks) {
  testing::runRanks(3, [](comm::Communicator& training) {
    NodeMonitor monitor(probeGroup(training));  // default timers: a link round every 2 s
    ASSERT_GE(waitForRound(monitor, milliseconds(3000)).probeRounds, 1);
    training.barrier();
    std::this_thread::sleep_for(milliseconds(300 * training.rank()));
    const auto start = Clock::now();
    monitor.stop();
    EXPECT_LT(secondsSince(start), 2.0) << "rank " << training.rank();
    monitor.stop();  // idempotent
  });
}

// The bandwidth measurement keeps within its share of the time: with a tiny share it runs in the first
// round only (its figure is kept), with a huge share in every round.
TEST(NodeMonitor, BandwidthIsMeasuredWithinItsShareOfTheTime) {
  for (const double share : {1e-6, 1e6}) {
    testing::runRanks(3, [share](comm::Communicator& training) {
      NodeMonitor::Options options;
      options.linksEvery = milliseconds(20);
      options.bandwidthShare = share;
      NodeMonitor monitor(probeGroup(training), options);
      const auto deadline = Clock::now() + milliseconds(10000);
      NodeSnapshot s = monitor.snapshot();
      while (s.probeRounds < 6 && Clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(20));
        s = monitor.snapshot();
      }
      training.barrier();  // every rank has seen 6 rounds before any stops
      s = monitor.snapshot();
      monitor.stop();
      ASSERT_GE(s.probeRounds, 6);
      EXPECT_GT(s.bandwidthBytesPerSecond, 0.0);
      if (share < 1e-3)
        EXPECT_EQ(s.bandwidthRounds, 1) << "rank " << training.rank() << " of " << s.probeRounds << " rounds";
      else
        EXPECT_EQ(s.bandwidthRounds, s.probeRounds) << "rank " << training.rank();
    });
  }
}

TEST(NodeMonitor, OnePeerStoppingEndsProbingEverywhere) {
  testing::runRanks(3, [](comm::Communicator& training) {
    NodeMonitor::Options options;
    options.linksEvery = milliseconds(100);
    options.memoryEvery = milliseconds(50);
    NodeMonitor monitor(probeGroup(training), options);
    ASSERT_GE(waitForRound(monitor, milliseconds(3000)).probeRounds, 1);
    training.barrier();
    if (training.rank() == 0) {
      const auto start = Clock::now();
      monitor.stop();
      EXPECT_LT(secondsSince(start), 1.0);
      return;
    }
    std::this_thread::sleep_for(milliseconds(800));  // several link periods: the peers saw the flag
    const auto rounds = monitor.snapshot().probeRounds;
    std::this_thread::sleep_for(milliseconds(500));
    const auto later = monitor.snapshot();
    EXPECT_EQ(later.probeRounds, rounds) << "rank " << training.rank() << " kept probing";
    EXPECT_GT(later.residentBytes, 0.0);
    const auto start = Clock::now();
    monitor.stop();  // the thread is only sampling memory now: no collective to wait for
    // A collective would hold stop() for the probe's timeout (seconds); 0.2 s failed once at 0.21 s under a
    // loaded CI machine, so the bound leaves room for scheduling and still tells the two apart.
    EXPECT_LT(secondsSince(start), 0.5);
  });
}

TEST(NodeMonitor, DeadPeerEndsProbingWithoutCrashOrHang) {
  testing::runRanks(3, [](comm::Communicator& training) {
    auto probe = probeGroup(training, milliseconds(2000));
    training.barrier();  // every probe group is fully connected before rank 2 drops its own
    if (training.rank() == 2) {
      probe.reset();
      return;
    }
    NodeMonitor::Options options;
    options.memoryEvery = milliseconds(50);
    NodeMonitor monitor(std::move(probe), options);
    std::this_thread::sleep_for(milliseconds(3000));  // past the probe timeout
    const auto s = monitor.snapshot();
    EXPECT_EQ(s.probeRounds, 0);
    EXPECT_GT(s.residentBytes, 0.0);
    const auto start = Clock::now();
    monitor.stop();
    EXPECT_LT(secondsSince(start), 0.5);
  });
}

TEST(NodeMonitor, WithoutAProbeCommunicatorItStillSamplesMemory) {
  NodeMonitor::Options options;
  options.memoryEvery = milliseconds(20);
  NodeMonitor monitor(nullptr, options);
  const auto first = monitor.snapshot();
  EXPECT_GT(first.residentBytes, 0.0);
  EXPECT_GT(first.memoryTotalBytes, first.memoryAvailableBytes);
  EXPECT_GT(first.memoryAvailableBytes, 0.0);
  EXPECT_TRUE(first.latencyMs.empty());

  constexpr size_t kBytes = size_t{200} << 20;
  std::unique_ptr<char[]> buffer(new char[kBytes]);
  std::memset(buffer.get(), 1, kBytes);
  const auto deadline = Clock::now() + milliseconds(2000);
  NodeSnapshot s = monitor.snapshot();
  while (s.residentBytes < first.residentBytes + 0.8 * kBytes && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
    s = monitor.snapshot();
  }
  EXPECT_EQ(buffer[kBytes / 2], 1);
  EXPECT_GE(s.residentBytes, first.residentBytes + 0.8 * kBytes) << "memory was not re-sampled";
  EXPECT_EQ(s.probeRounds, 0);
  const auto start = Clock::now();
  monitor.stop();
  EXPECT_LT(secondsSince(start), 0.2);
}

}  // namespace
}  // namespace balancenet::monitor

// Tests of point-to-point send/recv and of probeLinks on thread ranks over loopback Gloo.
#include <atomic>
#include <memory>

#include <ATen/ATen.h>
#include <c10/util/Backtrace.h>
#include <c10/util/Logging.h>
#include <gtest/gtest.h>

#include "balancenet/comm/LatencyProbe.h"
#include "balancenet/orchestrator/ProbePeers.h"
#include "testing/ThreadRanks.h"

namespace balancenet::comm {
namespace {

TEST(Communicator, SendRecvDeliversTheTensorToTheTaggedReceiver) {
  testing::runRanks(2, [](Communicator& comm) {
    auto t = at::zeros({3}, at::kFloat);
    if (comm.rank() == 0) {
      auto first = at::full({3}, 7.0f);
      auto second = at::full({3}, 9.0f);
      comm.send(first, 1, 11);
      comm.send(second, 1, 12);
    } else {
      comm.recv(t, 0, 11);
      EXPECT_TRUE(at::equal(t, at::full({3}, 7.0f)));
      comm.recv(t, 0, 12);
      EXPECT_TRUE(at::equal(t, at::full({3}, 9.0f)));
    }
  });
}

// The node monitor pings every 2 s during training: a send or recv must not raise (and swallow) a
// c10::Error inside, since each one symbolises a backtrace (milliseconds of CPU taken from training).
TEST(Communicator, SendAndRecvRaiseNoInternalError) {
  static std::atomic<int> errorsBuilt{0};
  c10::SetStackTraceFetcher([] {
    ++errorsBuilt;
    return std::string();
  });
  testing::runRanks(2, [](Communicator& comm) {
    auto t = at::zeros({4}, at::kFloat);
    for (int i = 0; i < 3; ++i) {
      if (comm.rank() == 0) {
        comm.send(t, 1, 5);
        comm.recv(t, 1, 6);
      } else {
        comm.recv(t, 0, 5);
        comm.send(t, 0, 6);
      }
    }
  });
  c10::SetStackTraceFetcher([] { return c10::get_backtrace(1); });
  EXPECT_EQ(errorsBuilt.load(), 0);
}

TEST(LatencyProbe, ThreeRanksMeasureEveryPeerAndTheNextLink) {
  std::atomic<int> checked{0};
  testing::runRanks(3, [&](Communicator& comm) {
    const auto links = probeLinks(comm, 5);
    ASSERT_EQ(links.latencyMs.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      if (r == comm.rank()) {
        EXPECT_EQ(links.latencyMs[r], 0.0);
      } else {
        EXPECT_GT(links.latencyMs[r], 0.0) << "rank " << comm.rank() << " to " << r;
        EXPECT_LT(links.latencyMs[r], 100.0) << "rank " << comm.rank() << " to " << r;
      }
    }
    EXPECT_GT(links.bandwidthBytesPerSecond, 0.0);
    ++checked;
  });
  EXPECT_EQ(checked, 3);
}

// --probe-peers: every rank measures its own k peers (ring neighbours first), and only the pairs the peer
// sets make are probed, in one global order (no deadlock with 5 ranks and k = 2).
TEST(LatencyProbe, KPeersMeasureTheirRingNeighbours) {
  std::atomic<int> checked{0};
  testing::runRanks(5, [&](Communicator& comm) {
    const auto links = probeLinks(comm, 2, false, orchestrator::probeSelection(comm.rank(), 5, 2, 7));
    ASSERT_EQ(links.peers, (std::vector<int>{(comm.rank() + 1) % 5, (comm.rank() + 4) % 5}));
    ASSERT_EQ(links.latencyMs.size(), 2u);
    for (double ms : links.latencyMs) {
      EXPECT_GT(ms, 0.0) << "rank " << comm.rank();
      EXPECT_LT(ms, 100.0) << "rank " << comm.rank();
    }
    ++checked;
  });
  EXPECT_EQ(checked, 5);
}

// k >= N-1: every pair is probed, and the answer keeps the peers' form (what --probe-peers rows carry).
TEST(LatencyProbe, KCoveringEveryoneAnswersInThePeersForm) {
  testing::runRanks(3, [&](Communicator& comm) {
    const auto links = probeLinks(comm, 1, false, orchestrator::probeSelection(comm.rank(), 3, 8));
    std::vector<int> others;
    for (int r = 0; r < 3; ++r)
      if (r != comm.rank()) others.push_back(r);
    EXPECT_EQ(links.peers, others);
    ASSERT_EQ(links.latencyMs.size(), 2u);
    for (double ms : links.latencyMs) EXPECT_GT(ms, 0.0);
  });
}

TEST(LatencyProbe, BothEndsOfAPairReportTheSameMedian) {
  testing::runRanks(2, [](Communicator& comm) {
    const auto links = probeLinks(comm, 3);
    auto mine = at::full({1}, links.latencyMs[1 - comm.rank()], at::kDouble);
    const auto both = comm.allgather(mine);
    EXPECT_EQ(both[0].item<double>(), both[1].item<double>());
    EXPECT_GT(links.bandwidthBytesPerSecond, 0.0);  // N == 2: the link is measured in both directions
  });
}

// A sender's link that delivers at `bytesPerSecond` (the Communicator makes a send wait for its link).
class OutgoingRate : public LinkModel {
 public:
  explicit OutgoingRate(double bytesPerSecond) : bytesPerSecond_(bytesPerSecond) {}
  Clock::time_point deliveredAt(Clock::time_point start, int64_t wireBytes) override {
    const std::chrono::duration<double> transfer(wireBytes / bytesPerSecond_);
    return start + std::chrono::duration_cast<Clock::duration>(transfer);
  }

 private:
  double bytesPerSecond_;
};

// Only rank 1's outgoing link is slow: rank 1 reads its rate, rank 0 (whose data goes the fast way and
// comes back as a 1-byte ack) reads far more. An echo of the 1 MiB would read twice the slow rate on rank 1.
TEST(LatencyProbe, BandwidthIsTheSendersOutgoingRate) {
  constexpr double kSlow = 10e6;  // bytes/s: 1 MiB in 105 ms
  testing::runRanks(2, [&](Communicator& comm) {
    if (comm.rank() == 1) comm.setLinkModel(std::make_shared<OutgoingRate>(kSlow));
    const auto links = probeLinks(comm, 1);
    std::printf("rank %d: outgoing bandwidth %.1f MB/s\n", comm.rank(), links.bandwidthBytesPerSecond / 1e6);
    if (comm.rank() == 1) {
      EXPECT_GT(links.bandwidthBytesPerSecond, 0.8 * kSlow);
      EXPECT_LT(links.bandwidthBytesPerSecond, 1.1 * kSlow);  // a little under the rate: the ack's latency
    } else {
      EXPECT_GT(links.bandwidthBytesPerSecond, 3 * kSlow);
    }
  });
}

TEST(LatencyProbe, OneRankHasOnlyItself) {
  testing::runRanks(1, [](Communicator& comm) {
    const auto links = probeLinks(comm);
    ASSERT_EQ(links.latencyMs.size(), 1u);
    EXPECT_EQ(links.latencyMs[0], 0.0);
    EXPECT_EQ(links.bandwidthBytesPerSecond, 0.0);
  });
}

}  // namespace
}  // namespace balancenet::comm

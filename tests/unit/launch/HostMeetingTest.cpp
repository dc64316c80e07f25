// The hosts' launchers meeting in a shared HashStore, each host a thread: every host gets the same layout, and a
// disagreement is one error on every host at once, never a wait for the timeout.
#include "balancenet/launch/HostMeeting.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "balancenet/core/Error.h"
#include "testing/UsageErrors.h"

namespace balancenet::launch {
using job::LaunchOptions;
namespace {

using balancenet::testing::usageErrorOf;
using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kTimeout{20000};  // far longer than any test below may take

LaunchOptions host(int nnodes, int nodeRank, int workers) {
  LaunchOptions l;
  l.nnodes = nnodes;
  l.nodeRank = nodeRank;
  l.nprocPerNode = workers;
  return l;
}

// Runs one meeting thread per host; each host's error message ("" when it met).
std::vector<std::string> meet(std::vector<LaunchOptions>& hosts) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(hosts.size());
  std::vector<std::thread> threads;
  for (size_t h = 0; h < hosts.size(); ++h)
    threads.emplace_back([&, h] {
      try {
        meetHosts(*store, "host:1234", hosts[h], kTimeout);
      } catch (const std::exception& e) {
        errors[h] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

TEST(HostMeeting, HostsOfDifferentSizesAgreeOnOneLayout) {
  std::vector<LaunchOptions> hosts{host(3, 0, 2), host(3, 1, 1), host(3, 2, 3)};
  const auto errors = meet(hosts);
  for (size_t h = 0; h < hosts.size(); ++h) {
    EXPECT_EQ(errors[h], "") << h;
    EXPECT_EQ(hosts[h].hostWorkers, (std::vector<int>{2, 1, 3})) << h;
    EXPECT_EQ(hosts[h].worldSize(), 6);
  }
  EXPECT_EQ(hosts[0].firstRank(), 0);
  EXPECT_EQ(hosts[1].firstRank(), 2);
  EXPECT_EQ(hosts[2].firstRank(), 3);
}

TEST(HostMeeting, TwoHostsWithOneNodeRankStopEveryHostAtOnce) {
  std::vector<LaunchOptions> hosts{host(2, 0, 1), host(2, 1, 1), host(2, 1, 1)};
  const auto start = Clock::now();
  const auto errors = meet(hosts);
  EXPECT_LT(Clock::now() - start, kTimeout / 4);
  // The duplicate may come before or after the meeting has completed for the other two: it always fails.
  int refused = 0;
  for (const auto& e : errors) {
    if (e.empty()) continue;
    ++refused;
    EXPECT_NE(e.find("two hosts were started with --node-rank 1 for the job at host:1234"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_GE(refused, 1);
}

TEST(HostMeeting, DifferentNnodesAreOneErrorNotATimeout) {
  std::vector<LaunchOptions> hosts{host(2, 0, 1), host(3, 1, 1)};
  const auto start = Clock::now();
  const auto errors = meet(hosts);
  EXPECT_LT(Clock::now() - start, kTimeout / 4);
  for (const auto& e : errors) EXPECT_NE(e.find("give every host the same --nnodes"), std::string::npos) << e;
}

TEST(HostMeeting, AHostWhoseListDiffersStopsEveryHost) {
  std::vector<LaunchOptions> hosts{host(2, 0, 2), host(2, 1, 1)};
  hosts[0].hostWorkers = {2, 2};  // --nproc-per-node 2,2 on host 0; host 1 runs 1
  const auto errors = meet(hosts);
  for (const auto& e : errors)
    EXPECT_NE(e.find("host 0: the hosts run 2,1 workers but this host's --nproc-per-node 2,2 says otherwise"),
              std::string::npos)
        << e;
}

TEST(HostMeeting, AMissingHostIsNamedAfterTheTimeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto l = host(3, 0, 1);
  try {
    meetHosts(*store, "host:1234", l, std::chrono::milliseconds(200));
    FAIL() << "met without hosts 1 and 2";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("host(s) 1,2 of --nnodes 3 never reached the job's store at host:1234"),
              std::string::npos)
        << e.what();
  }
}

// Flags checked against --nnodes x --nproc-per-node before the meeting: refused when the hosts run another world,
// and naming the list form to give; harmless when the world is the assumed one.
TEST(HostMeeting, FlagsCheckedAgainstAnAssumedWorldNeedTheListForm) {
  auto l = host(2, 0, 2);
  l.assumedWorldFlags = {"--split", "--node-speed"};
  EXPECT_NE(usageErrorOf([&] {
              agreeOnHosts(l, {2, 1});
            })
                .find("the hosts run 2+1 = 3 workers, not the --nnodes 2 x --nproc-per-node 2 = 4 that --split, "
                      "--node-speed were checked against: give every host --nproc-per-node 2,1"),
            std::string::npos);
  agreeOnHosts(l, {3, 1});  // the same world, another layout: the flags by rank still hold
  EXPECT_EQ(l.hostWorkers, (std::vector<int>{3, 1}));
  auto free = host(2, 0, 2);
  agreeOnHosts(free, {2, 1});
  EXPECT_EQ(free.worldSize(), 3);
}

}  // namespace
}  // namespace balancenet::launch

// The one re-form sequence (elastic/GroupReform.h), members as threads over a shared HashStore and real Gloo groups:
// a member left out of a generation joins the next one as a new worker and continues from the newest committed
// state, as the members do; fewer than --min-workers stops with one line.
#include "balancenet/elastic/GroupReform.h"

#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <future>
#include <thread>

#include <fmt/format.h>

#include "balancenet/comm/group/GlooGroup.h"
#include "balancenet/core/Error.h"
#include "balancenet/elastic/Admission.h"
#include "balancenet/elastic/Heartbeat.h"

namespace balancenet::elastic {
namespace {

using namespace std::chrono_literals;

Connect glooOverTheStore() {
  return [](const c10::intrusive_ptr<c10d::Store>& scoped, int rank, int world) {
    return comm::joinGroup(scoped, rank, world, 30s);
  };
}

std::string stateOf(int member, int64_t step) { return fmt::format("member {} after step {}", member, step); }

struct Seen {
  Generation first, second;
  std::string firstState, secondState;
};

TEST(GroupReform, AMemberLeftOutOfAGenerationJoinsTheNextWithTheNewestState) {
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::HashStore>();
  Heartbeat beat0(store, 0), beat1(store, 1);  // member 2 has not beaten yet: generation 1 forms without it
  std::promise<void> firstFormed[2];

  auto member = [&](int m) {
    Membership membership(store, 30s);
    GroupReform reform(store, membership, m, glooOverTheStore(), ReformOptions{1, 30s});
    Seen seen;
    auto first = reform.reform(1, {0, 1, 2}, 10 + m, 10 + m, [&] { return stateOf(m, 10 + m); });
    seen.first = first.generation;
    seen.firstState = first.state;
    firstFormed[m].set_value();
    // Member 0, as rank 0 at a boundary, admits the waiting joiner into generation 2; both then form it with it.
    while (!membership.planned(2)) {
      if (m == 0) admitJoiners(membership, 2, 2, /*step=*/12, /*maxWorkers=*/3, /*globalBatch=*/1000);
      std::this_thread::sleep_for(10ms);
    }
    std::vector<int> candidates = first.generation.members;
    for (int joiner : reform.admittedJoiners(2, 12)) candidates.push_back(joiner);
    auto second = reform.reform(2, candidates, 12 + m, 12 + m, [&] { return stateOf(m, 12 + m); });
    seen.second = second.generation;
    seen.secondState = second.state;
    return seen;
  };
  auto latecomer = [&] {
    for (auto& formed : firstFormed) formed.get_future().wait();
    Heartbeat beat2(store, 2);
    Membership membership(store, 30s);
    GroupReform reform(store, membership, 2, glooOverTheStore(), ReformOptions{1, 30s});
    auto formed = reform.reform(1, {0, 1, 2}, 10, 10, [] { return std::string("never asked: it is not the source"); });
    return std::make_pair(formed.generation, formed.state);
  };

  auto f0 = std::async(std::launch::async, member, 0);
  auto f1 = std::async(std::launch::async, member, 1);
  auto f2 = std::async(std::launch::async, latecomer);
  const Seen s0 = f0.get(), s1 = f1.get();
  const auto [lateGeneration, lateState] = f2.get();

  for (const Seen& s : {s0, s1}) {
    EXPECT_EQ(s.first.members, (std::vector<int>{0, 1}));
    EXPECT_EQ(s.firstState, stateOf(1, 11));  // member 1 committed last
    EXPECT_EQ(s.second.number, 2);
    EXPECT_EQ(s.second.members, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(s.secondState, stateOf(1, 13));
  }
  EXPECT_EQ(lateGeneration.number, 2);
  EXPECT_EQ(lateGeneration.members, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(lateState, stateOf(1, 13));
}

TEST(GroupReform, FewerThanMinWorkersStopsWithOneLine) {
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::HashStore>();
  Heartbeat beat0(store, 0);  // member 1 is gone
  Membership membership(store, 30s);
  GroupReform reform(store, membership, 0, glooOverTheStore(), ReformOptions{2, 30s});
  try {
    reform.reform(1, {0, 1}, 7, 7, [] { return std::string(); });
    FAIL() << "a generation of one formed against --min-workers 2";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("1 worker(s) left (rank(s) 0), fewer than --min-workers 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace balancenet::elastic

// The membership protocol over a shared HashStore, with members as threads: everybody gets the same
// closed generation, a member without heartbeat is left out, joiners are admitted in order and within
// the room left (an admission racing the join request is kept; a refusal reaches the joiner), and the
// stall report names the missing rank and its last step.
#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/elastic/Heartbeat.h"
#include "balancenet/elastic/Membership.h"
#include "balancenet/elastic/StallReport.h"

namespace balancenet::elastic {
namespace {

using namespace std::chrono_literals;

c10::intrusive_ptr<c10d::Store> newStore() { return c10::make_intrusive<c10d::HashStore>(); }

// A store that runs `onJoinRecord` right after a join record is written, inside requestJoin: rank 0
// admitting the joiner at the earliest moment it can, deterministically.
class AdmitOnJoinRecord : public c10d::HashStore {
 public:
  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    c10d::HashStore::set(key, value);
    if (key.rfind("elastic/join/", 0) == 0 && onJoinRecord) std::exchange(onJoinRecord, nullptr)();
  }
  std::function<void()> onJoinRecord;
};

std::vector<Generation> formTogether(const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int>& present,
                                     const std::vector<int>& candidates) {
  std::vector<std::future<Generation>> futures;
  for (int m : present)
    futures.push_back(std::async(std::launch::async, [&, m] {
      Membership membership(store, 20s);
      return membership.form(1, m, /*committed=*/10 + m, candidates, /*mayClose=*/true, 20s);
    }));
  std::vector<Generation> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

TEST(Membership, EveryLiveCandidateGetsTheSameGeneration) {
  auto store = newStore();
  Heartbeat b0(store, 0), b1(store, 1), b2(store, 2);
  const auto generations = formTogether(store, {2, 0, 1}, {0, 1, 2});
  for (const auto& g : generations) {
    EXPECT_EQ(g.number, 1);
    EXPECT_EQ(g.members, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(g.committed, (std::vector<int64_t>{10, 11, 12}));
    EXPECT_EQ(g.sourceRank(), 2);  // the newest state
    EXPECT_EQ(g.rankOf(1), 1);
    EXPECT_EQ(g.rankOf(7), -1);
  }
}

TEST(Membership, AMemberWithoutHeartbeatIsLeftOut) {
  auto store = newStore();
  Heartbeat b0(store, 0), b2(store, 2);  // member 1 died before its first beat
  const auto generations = formTogether(store, {0, 2}, {0, 1, 2});
  for (const auto& g : generations) {
    EXPECT_EQ(g.members, (std::vector<int>{0, 2}));
    EXPECT_EQ(g.rankOf(2), 1);  // ranks follow member ids
  }
}

TEST(Membership, ARestartedMemberWaitingToJoinIsNotWaitedFor) {
  auto store = newStore();
  Heartbeat b0(store, 0), b1(store, 1), b2(store, 2);  // member 1 died and its restart beats again
  Membership(store, 20s).requestJoin(1);
  const auto start = std::chrono::steady_clock::now();
  const auto generations = formTogether(store, {0, 2}, {0, 1, 2});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // not the 20 s peer timeout
  for (const auto& g : generations) EXPECT_EQ(g.members, (std::vector<int>{0, 2}));
}

TEST(Membership, JoinersAreAdmittedOldestFirstWithinTheRoomLeft) {
  auto store = newStore();
  Membership rank0(store, 20s), joiner(store, 20s);
  joiner.requestJoin(5);
  joiner.requestJoin(3);
  EXPECT_FALSE(rank0.planned(1));
  const auto first = rank0.takePendingJoiners(1);
  EXPECT_EQ(first, std::vector<int>{5});
  rank0.announce(1, Plan{7, first});
  EXPECT_EQ(joiner.waitForAdmission(5, 20s), 1);
  auto plan = rank0.planned(1);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->atStep, 7);
  EXPECT_EQ(plan->joiners, std::vector<int>{5});
  EXPECT_EQ(rank0.takePendingJoiners(4), std::vector<int>{3});
  EXPECT_TRUE(rank0.takePendingJoiners(4).empty());
}

TEST(Membership, AnAdmissionRightAfterTheJoinRequestIsKept) {
  auto store = c10::make_intrusive<AdmitOnJoinRecord>();
  Membership rank0(store, 20s), joiner(store, 20s);
  store->onJoinRecord = [&] { rank0.announce(1, Plan{7, rank0.takePendingJoiners(1)}); };
  joiner.requestJoin(5);
  EXPECT_EQ(joiner.waitForAdmission(5, 500ms), 1);  // not reset to "waiting" by requestJoin's own writes
}

TEST(Membership, ARefusedJoinerIsToldWhyAtOnce) {
  auto store = newStore();
  Membership rank0(store, 20s), joiner(store, 20s);
  joiner.requestJoin(4);
  for (int m : rank0.takePendingJoiners(1))
    rank0.refuse(m, "the job has 2 workers, one per sample of --global-batch 2");
  const auto start = std::chrono::steady_clock::now();
  try {
    joiner.waitForAdmission(4, 20s);
    ADD_FAILURE() << "admitted";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()), "rank 4 was refused: the job has 2 workers, one per sample of --global-batch 2");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Membership, AJoinerWaitingWhenTheJobEndsGoesHome) {
  auto store = newStore();
  Membership rank0(store, 20s), joiner(store, 20s);
  rank0.recordInitialWorld(3);
  EXPECT_EQ(joiner.newMemberId(), 3);
  EXPECT_EQ(joiner.newMemberId(), 4);
  joiner.requestJoin(3);
  rank0.markFinished();
  EXPECT_FALSE(joiner.waitForAdmission(3, 20s));
  Membership fresh(newStore(), 20s);
  fresh.requestJoin(4);
  EXPECT_THROW(fresh.waitForAdmission(4, 300ms), RuntimeFailure);  // nobody admits it
}

TEST(StallReport, NamesTheSilentRankWithItsLastStep) {
  auto store = newStore();
  Heartbeat b0(store, 0), b2(store, 2);
  const auto now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::string old = fmt::format("56 {}", now - 30000);
  store->set("elastic/hb/1", std::vector<uint8_t>(old.begin(), old.end()));
  const auto line = describeMissing(*store, {0, 1, 2}, 0, 57, "Timed out");
  EXPECT_EQ(line.rfind("step 57: rank 1 has not contributed for 3", 0), 0u) << line;
  EXPECT_NE(line.find("(last at step 56)"), std::string::npos) << line;
  EXPECT_EQ(line.find("rank 2"), std::string::npos) << line;  // alive
}

TEST(StallReport, NamesTheHostOfASilentRankOfAJobOverSeveralHosts) {
  auto store = newStore();
  Heartbeat b0(store, 0, "10.0.0.1");
  {
    Heartbeat b1(store, 1, "10.0.0.2");  // beats once, then stops: stale after kStaleAfter
  }
  const auto line = describeMissing(*store, {0, 1}, 0, 7, "Timed out");
  EXPECT_EQ(line.rfind("step 7: rank 1 at 10.0.0.2 has not contributed for ", 0), 0u) << line;
}

TEST(Membership, AnyBeatingUntilEveryMemberStopped) {
  auto store = newStore();
  Membership job(store, 20s);
  EXPECT_FALSE(job.anyBeating({0, 1}));  // never beat
  {
    Heartbeat b1(store, 1, "10.0.0.2");
    EXPECT_TRUE(job.anyBeating({0, 1}));
  }
  std::this_thread::sleep_for(kStaleAfter + 300ms);
  EXPECT_FALSE(job.anyBeating({0, 1}));
}

TEST(StallReport, WithEveryPeerAliveItIsTheFailureItself) {
  auto store = newStore();
  Heartbeat b1(store, 1), b0(store, 0);
  b0.setStep(3);
  b1.setStep(3);  // on time: the report waits long enough to see it
  const auto line = describeMissing(*store, {0, 1}, 0, 3, "bad split\nframe #0");
  EXPECT_EQ(line, "step 3: bad split");
}

}  // namespace
}  // namespace balancenet::elastic

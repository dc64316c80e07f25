// Membership: who trains in which rendezvous generation, agreed through the job store alone.
// Generation 0 is the job as launched (member id = launch rank). A later generation g is formed when a
// member dies (the survivors notice a failed collective) or joiners were admitted at a step boundary:
// every candidate registers under elastic/g<g>/, and the first registered member that sees every
// candidate registered or gone (heartbeat stale), or the peer timeout pass, closes the generation with
// one compare-and-set; everybody reads the same closed list. Ranks follow member ids.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
}

namespace balancenet::elastic {

struct Generation {
  int number = 0;
  std::vector<int> members;        // member ids in rank order
  std::vector<int64_t> committed;  // each member's last committed step; -1: a joiner without state

  int rankOf(int member) const;    // -1: not a member
  int sourceRank() const;          // the rank holding the newest state (lowest rank on ties)
  std::string memberList() const;  // "0,2,3"
};

// A membership change rank 0 announced: at the boundary after `atStep` steps, generation `number`
// forms with the current members and `joiners`.
struct Plan {
  int64_t atStep = 0;
  std::vector<int> joiners;
};

class Membership {
 public:
  Membership(c10::intrusive_ptr<c10d::Store> jobStore, std::chrono::milliseconds peerTimeout);

  // Registers `member` (its committed step; -1 for a joiner) in generation `number` and returns the
  // closed generation, which may not contain `member` (it came too late). Only members may close it
  // (`mayClose`): a joiner waits for them, until `waitAtMost` passes (then throws RuntimeFailure).
  Generation form(int number, int member, int64_t committed, const std::vector<int>& candidates, bool mayClose,
                  std::chrono::milliseconds waitAtMost);

  // Generation 0's world, recorded by rank 0 at start so joiners can take the next free member ids.
  void recordInitialWorld(int worldSize);
  int newMemberId();  // for a worker joining from outside the launcher

  void requestJoin(int member);
  // A restarted worker beats under its old member id while it waits for admission: it is alive but not
  // coming to the generation being formed, so the members must not wait --peer-timeout for it.
  bool waitingToJoin(int member);
  // The generation `member` is admitted to; nothing once the job finished (then it must not join).
  // Throws RuntimeFailure once refused, or after `waitAtMost` (no member left to admit it, or the job
  // stays at --max-nodes).
  std::optional<int> waitForAdmission(int member, std::chrono::milliseconds waitAtMost);
  // Rank 0, at a step boundary: joiners not yet admitted, at most `room`, oldest first.
  std::vector<int> takePendingJoiners(int room);
  void announce(int generation, const Plan& plan);  // also admits plan.joiners to `generation`
  // Rank 0: `member` will never be admitted; its waitForAdmission throws "rank M was refused: <reason>".
  void refuse(int member, const std::string& reason);
  std::optional<Plan> planned(int generation);

  void markFinished();  // the training loop is over: joiners still waiting go home
  bool finished();
  // Whether any of `members` still beats (heartbeat younger than kStaleAfter): the launcher serving the
  // store after its own workers died keeps it until none does.
  bool anyBeating(const std::vector<int>& members);

 private:
  std::string get(const std::string& key);
  void set(const std::string& key, const std::string& value);

  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds peerTimeout_;
};

}  // namespace balancenet::elastic

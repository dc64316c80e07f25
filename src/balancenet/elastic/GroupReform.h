// GroupReform: the one way a worker forms a new generation of its group, whoever drives its loop: the trainer's
// ElasticAgent and the Python package's Session. Re-forming: generation `number` forms with the candidates; a
// member left out of it (its heartbeat looked dead, or it came late) joins again like a new worker; a member that
// dies while the generation forms makes the others form the next one; fewer than --min-workers stops the job.
// Joining: a new or restarted worker waits to be admitted at a boundary and forms that generation with the members.
// Either way every member of the new group ends up with the newest committed state, from the member that committed
// last (Generation::sourceRank).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/elastic/Membership.h"

namespace balancenet::elastic {

// Forms the group of a generation over the job store (scoped to that generation).
using Connect = std::function<std::unique_ptr<comm::Communicator>(const c10::intrusive_ptr<c10d::Store>& scoped,
                                                                  int rank, int worldSize)>;

// A generation formed, its group, and the state every member continues from.
struct FormedGroup {
  Generation generation;
  std::unique_ptr<comm::Communicator> comm;
  std::string state;  // the source member's committed state (empty where it had none)
};

struct ReformOptions {
  int minNodes = 1;                              // --min-workers
  std::chrono::milliseconds joinTimeout{60000};  // how long a generation may take to form, and a joiner to be admitted
};

class GroupReform {
 public:
  // `jobStore`: the store every generation meets in; `membership` is over it.
  GroupReform(c10::intrusive_ptr<c10d::Store> jobStore, Membership& membership, int member, Connect connect,
              ReformOptions options);

  // Joins a running job as a new worker: asks to be admitted, forms the generation it is admitted to (asking again
  // when that one closed without it) and receives the state. Nothing when the job finished first.
  std::optional<FormedGroup> join();

  // Forms generation `number` with `candidates`, this member at step `atStep`. `committedStep`: the step of the
  // committed state it holds (-1: none, as a --shard-state member without the gathered state); `committedState` is
  // called only on the generation's source member. Throws RuntimeFailure when fewer than --min-workers remain, or
  // when this member was left out and the job finished before it could join again.
  FormedGroup reform(int number, std::vector<int> candidates, int64_t atStep, int64_t committedStep,
                     const std::function<std::string()>& committedState);

  // The joiners rank 0 admitted for generation `number` (they come along into a re-form after a failure).
  std::vector<int> admittedJoiners(int number, int64_t step);

 private:
  std::unique_ptr<comm::Communicator> connect(const Generation& g);

  c10::intrusive_ptr<c10d::Store> store_;
  Membership& membership_;
  int member_;
  Connect connect_;
  ReformOptions options_;
};

}  // namespace balancenet::elastic

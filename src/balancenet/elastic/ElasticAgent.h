// ElasticAgent: a worker's side of membership. As a step boundary it beats the step into the store,
// keeps the last committed state (elastic jobs) and, on rank 0, admits joiners at the next boundary.
// As the trainer's failure recovery it either stops the job with one line naming the missing ranks
// (not elastic) or re-forms the group with the survivors (and any admitted joiners), hands every rank
// the newest committed state, and has the worker rebuild what hangs on the group.
#pragma once
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/elastic/GroupReform.h"
#include "balancenet/elastic/Heartbeat.h"
#include "balancenet/elastic/Membership.h"
#include "balancenet/trainer/Trainer.h"

namespace balancenet::elastic {

struct ElasticOptions {
  bool elastic = false;  // false: a failure stops the job (after naming the missing ranks)
  int minNodes = 1;
  int maxNodes = 1;
  int64_t globalBatch = std::numeric_limits<int64_t>::max();  // every member needs a sample: joiners beyond are refused
  std::chrono::milliseconds peerTimeout{30000};               // also the longest a generation waits for its members
  std::chrono::milliseconds joinTimeout{60000};               // how long a joiner waits for its generation to form
  std::string host;  // this worker's address, named when it goes missing (empty: a job on one machine)
};

// What the worker owns on the group: dropped before a re-form, built again over the new group.
class GroupParts {
 public:
  virtual ~GroupParts() = default;
  // Stops the probe thread and drops the gradient sync, the allocator and the group (its peers blocked
  // in a collective with this rank then fail at once instead of at their timeout).
  virtual void release() = 0;
  // Builds sync, allocator and monitor over `comm` (rank r is member generation.members[r]) and calls
  // trainer.rewire() with them.
  virtual void rebuild(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm,
                       const Generation& generation) = 0;
};

class ElasticAgent : public trainer::StepBoundary, public trainer::FailureRecovery {
 public:
  // `jobStore`: the store every generation meets in (it must outlive any one worker for elastic jobs).
  ElasticAgent(ElasticOptions options, c10::intrusive_ptr<c10d::Store> jobStore, int member, Connect connect);

  // Generation 0: the job as launched (member = rank).
  void startLaunched(int worldSize);
  // A worker joining a running job: waits to be admitted, forms the generation with the members and
  // returns its group; `state` receives the newest committed state. Nothing when the job finished first.
  std::unique_ptr<comm::Communicator> join(std::string& state);
  const Generation& generation() const { return generation_; }

  // The newest checkpoint's state, where one can be read (--checkpoint-dir): what a --shard-state group goes back to
  // when a member dies with its slice of the optimiser state.
  using NewestCheckpoint = std::function<std::optional<trainer::TrainingState>()>;

  // Drives the current world; must be set before training starts (the trainer and the parts outlive it).
  void attach(trainer::Trainer& trainer, GroupParts& parts, NewestCheckpoint newestCheckpoint = {});

  // The engine is the attached trainer: membership changes rewire the data-parallel engine alone.
  void afterStep(trainer::StepEngine& engine, int64_t totalSteps) override;
  void recover(trainer::StepEngine& engine, const std::exception& failure) override;
  // After training: joiners still waiting go home.
  void finish();

 private:
  // Forms generation `number` and continues the trainer on it from the newest committed state.
  void reform(trainer::Trainer& trainer, int number, std::vector<int> candidates, int64_t step);
  // Continues the trainer on `comm` (generation_) from `state`; rank 0 says what changed since `before`.
  void adopt(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm, const std::string& state,
             const Generation& before);

  ElasticOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;
  int member_;
  Membership membership_;
  GroupReform reform_;  // over membership_
  Heartbeat heartbeat_;
  Generation generation_;
  GroupParts* parts_ = nullptr;
  trainer::Trainer* trainer_ = nullptr;  // attach()'s
  // After the last completed step (elastic only). Under --shard-state none between re-forms (a worker holds its
  // slice only): at a planned re-form rank 0 holds the gathered state, after a failure the newest checkpoint's.
  std::optional<trainer::TrainingState> committed_;
  NewestCheckpoint newestCheckpoint_;
  int64_t lastFailureStep_ = -1;
  int failuresAtSameStep_ = 0;
};

}  // namespace balancenet::elastic

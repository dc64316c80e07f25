// Boundary work, failure handling and the re-form sequence of one worker.
#include "balancenet/elastic/ElasticAgent.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/elastic/Admission.h"
#include "balancenet/elastic/StallReport.h"
#include "balancenet/trainer/TrainingState.h"

namespace balancenet::elastic {
namespace {

// A failure that re-forming cannot cure (a bug, not a peer) would otherwise loop for ever.
constexpr int kMaxFailuresAtOneStep = 3;

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  for (int x : a)
    if (std::find(b.begin(), b.end(), x) == b.end()) out.push_back(x);
  return out;
}

std::string describeChange(const Generation& before, const Generation& after) {
  std::string change;
  if (auto lost = minus(before.members, after.members); !lost.empty())
    change += fmt::format("; lost rank(s) {}", fmt::join(lost, ","));
  if (auto joined = minus(after.members, before.members); !joined.empty())
    change += fmt::format("; joined rank(s) {}", fmt::join(joined, ","));
  return change;
}

}  // namespace

ElasticAgent::ElasticAgent(ElasticOptions options, c10::intrusive_ptr<c10d::Store> jobStore, int member,
                           Connect connect)
    : options_(options),
      store_(std::move(jobStore)),
      member_(member),
      membership_(store_, options.peerTimeout),
      reform_(store_, membership_, member, std::move(connect), ReformOptions{options.minNodes, options.joinTimeout}),
      heartbeat_(store_, member, options.host) {}

void ElasticAgent::startLaunched(int worldSize) {
  generation_ = Generation{};
  for (int r = 0; r < worldSize; ++r) {
    generation_.members.push_back(r);
    generation_.committed.push_back(0);
  }
  if (options_.elastic && member_ == 0) membership_.recordInitialWorld(worldSize);
}

std::unique_ptr<comm::Communicator> ElasticAgent::join(std::string& state) {
  auto formed = reform_.join();
  if (!formed) return nullptr;
  generation_ = formed->generation;
  state = std::move(formed->state);
  return std::move(formed->comm);
}

void ElasticAgent::attach(trainer::Trainer& trainer, GroupParts& parts, NewestCheckpoint newestCheckpoint) {
  parts_ = &parts;
  trainer_ = &trainer;
  newestCheckpoint_ = std::move(newestCheckpoint);
  heartbeat_.setStep(trainer.stepsDone());
  if (options_.elastic && !trainer.shardsState()) committed_ = trainer.captureState();
}

void ElasticAgent::afterStep(trainer::StepEngine& engine, int64_t totalSteps) {
  auto& trainer = *trainer_;
  const int64_t step = engine.stepsDone();
  heartbeat_.setStep(step);
  if (!options_.elastic) return;
  if (!trainer.shardsState()) committed_ = trainer.captureState();
  const int next = generation_.number + 1;
  auto plan = membership_.planned(next);
  // Rank 0 admits joiners for the next boundary: every rank is at most one step away from it, so each
  // sees the plan at that boundary at the latest (the step between needs rank 0's contribution).
  if (!plan && generation_.rankOf(member_) == 0 && step + 1 < totalSteps)
    admitJoiners(membership_, static_cast<int>(generation_.members.size()), next, step, options_.maxNodes,
                 options_.globalBatch);
  if (plan && plan->atStep == step) {
    auto candidates = generation_.members;
    candidates.insert(candidates.end(), plan->joiners.begin(), plan->joiners.end());
    // Every member is here: under --shard-state they gather the whole state while the old group still stands.
    if (trainer.shardsState()) committed_ = trainer.jobState();
    parts_->release();
    reform(trainer, next, candidates, step);
  }
}

void ElasticAgent::recover(trainer::StepEngine& engine, const std::exception& failure) {
  auto& trainer = *trainer_;
  const int64_t step = engine.stepsDone();
  if (dynamic_cast<const UsageError*>(&failure)) throw UsageError(failure.what());
  if (!options_.elastic)
    throw RuntimeFailure(describeMissing(*store_, generation_.members, member_, step, failure.what()));
  failuresAtSameStep_ = step == lastFailureStep_ ? failuresAtSameStep_ + 1 : 1;
  lastFailureStep_ = step;
  if (failuresAtSameStep_ > kMaxFailuresAtOneStep)
    throw RuntimeFailure(fmt::format("step {}: the group failed {} times at this step: {}", step, failuresAtSameStep_,
                                     firstLine(failure.what())));
  spdlog::warn("step {}: a collective failed ({}); re-forming the group", step, firstLine(failure.what()));
  // Dropping our end of the group first releases peers still blocked in it.
  parts_->release();
  // A lost member took its slice of the optimiser state: the group goes back to the newest checkpoint, every slice
  // in it. (Each survivor reads it; one that cannot takes the state from one that can.)
  if (trainer.shardsState()) committed_ = newestCheckpoint_ ? newestCheckpoint_() : std::nullopt;
  const int next = generation_.number + 1;
  auto candidates = generation_.members;
  const auto joiners = reform_.admittedJoiners(next, step);  // admitted ones come along
  candidates.insert(candidates.end(), joiners.begin(), joiners.end());
  reform(trainer, next, candidates, step);
}

void ElasticAgent::reform(trainer::Trainer& trainer, int number, std::vector<int> candidates, int64_t step) {
  const Generation before = generation_;
  const int64_t committed = committed_ ? committed_->step : -1;
  auto formed = reform_.reform(number, std::move(candidates), step, committed,
                               [&] { return committed_ ? trainer::toBytes(*committed_) : std::string(); });
  generation_ = formed.generation;
  if (formed.state.empty())  // --shard-state only: every other member commits each step
    throw RuntimeFailure(fmt::format(
        "step {}: a lost worker's slice of the optimiser state (--shard-state) is in no checkpoint yet: the job stops "
        "(a checkpoint every --checkpoint-every steps is what the group goes back to)",
        step));
  adopt(trainer, std::move(formed.comm), formed.state, before);
}

void ElasticAgent::adopt(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm, const std::string& state,
                         const Generation& before) {
  auto restored = trainer::fromBytes(state);
  const int64_t stepBefore = trainer.stepsDone();
  parts_->rebuild(trainer, std::move(comm), generation_);
  trainer.restoreState(restored);
  heartbeat_.setStep(restored.step);
  if (generation_.rankOf(member_) == 0)
    spdlog::info("membership changed: generation {}, {} workers (rank(s) {}), going on from step {}{}",
                 generation_.number, generation_.members.size(), generation_.memberList(), restored.step,
                 describeChange(before, generation_));
  // Under --shard-state the whole state is not kept: each member holds its slice, gathered again when needed.
  if (trainer.shardsState()) {
    if (generation_.rankOf(member_) == 0 && restored.step < stepBefore)
      spdlog::info(
          "--shard-state: the group went back to the checkpoint of step {}, which holds every slice of the "
          "optimiser state",
          restored.step);
    committed_.reset();
  } else {
    committed_ = std::move(restored);
  }
}

void ElasticAgent::finish() {
  if (options_.elastic && generation_.rankOf(member_) == 0) membership_.markFinished();
}

}  // namespace balancenet::elastic

// Boundary work, failure handling and the re-form sequence of one worker.
#include "balancenet/elastic/ElasticAgent.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/core/Error.h"
#include "balancenet/elastic/Admission.h"
#include "balancenet/elastic/StallReport.h"
#include "balancenet/elastic/StateTransfer.h"

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

// A host cut off from the network (or whose store host is gone) fails in a c10d store call with a bare
// socket error ("Connection reset by peer"): the line says what it was doing.
template <typename Call>
auto askStore(int64_t step, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("step {}: the job's store stopped answering while the group re-formed ({})", step,
                                     firstLine(e.what())));
  }
}

}  // namespace

ElasticAgent::ElasticAgent(ElasticOptions options, c10::intrusive_ptr<c10d::Store> jobStore, int member,
                           Connect connect)
    : options_(options),
      store_(std::move(jobStore)),
      member_(member),
      connect_(std::move(connect)),
      membership_(store_, options.peerTimeout),
      heartbeat_(store_, member, options.host) {}

void ElasticAgent::startLaunched(int worldSize) {
  generation_ = Generation{};
  for (int r = 0; r < worldSize; ++r) {
    generation_.members.push_back(r);
    generation_.committed.push_back(0);
  }
  if (options_.elastic && member_ == 0) membership_.recordInitialWorld(worldSize);
}

std::unique_ptr<comm::Communicator> ElasticAgent::connectGeneration(const Generation& g) {
  return connect_(comm::scopedStore(comm::elasticGenerationPrefix(g.number), store_), g.rankOf(member_),
                  static_cast<int>(g.members.size()));
}

std::unique_ptr<comm::Communicator> ElasticAgent::join(std::string& state) {
  membership_.requestJoin(member_);
  std::optional<int> number;
  while (true) {
    if (!number) number = membership_.waitForAdmission(member_, options_.joinTimeout);
    if (!number) return nullptr;
    Generation g = membership_.form(*number, member_, -1, {}, /*mayClose=*/false, options_.joinTimeout);
    if (g.rankOf(member_) < 0) {  // closed without us (we came late): ask again
      membership_.requestJoin(member_);
      number.reset();
      continue;
    }
    try {
      auto comm = connectGeneration(g);
      state = broadcastBytes(*comm, g.sourceRank(), "");
      generation_ = g;
      return comm;
    } catch (const std::exception& e) {
      // A member died while the group formed: the others form the next generation, with us.
      spdlog::warn("joining generation {} failed ({}); trying the next one", *number, firstLine(e.what()));
      number = *number + 1;
    }
  }
}

void ElasticAgent::attach(trainer::Trainer& trainer, GroupParts& parts) {
  parts_ = &parts;
  trainer_ = &trainer;
  heartbeat_.setStep(trainer.stepsDone());
  if (options_.elastic) committed_ = trainer.captureState();
}

void ElasticAgent::afterStep(trainer::StepEngine& engine, int64_t totalSteps) {
  auto& trainer = *trainer_;
  const int64_t step = engine.stepsDone();
  heartbeat_.setStep(step);
  if (!options_.elastic) return;
  committed_ = trainer.captureState();
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
    parts_->release();
    reform(trainer, next, candidates);
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
  const int next = generation_.number + 1;
  auto candidates = generation_.members;
  if (auto plan = askStore(step, [&] { return membership_.planned(next); }))
    candidates.insert(candidates.end(), plan->joiners.begin(), plan->joiners.end());
  reform(trainer, next, candidates);
}

void ElasticAgent::reform(trainer::Trainer& trainer, int number, std::vector<int> candidates) {
  const Generation before = generation_;
  const int64_t committed = committed_ ? committed_->step : -1;
  while (true) {
    Generation g = askStore(committed, [&] {
      return membership_.form(number, member_, committed, candidates, /*mayClose=*/true, options_.joinTimeout);
    });
    if (g.rankOf(member_) < 0) {
      // Closed without us (our heartbeat looked dead, or we came late): join like a new worker.
      spdlog::warn("step {}: rank {} came late to generation {} (members {}); joining again", committed, member_,
                   number, g.memberList());
      std::string state;
      auto comm = join(state);
      if (!comm) throw RuntimeFailure(fmt::format("rank {}: the job finished without this worker", member_));
      adopt(trainer, std::move(comm), state, before);
      return;
    }
    if (static_cast<int>(g.members.size()) < options_.minNodes)
      throw RuntimeFailure(fmt::format("step {}: {} worker(s) left (rank(s) {}), fewer than --min-workers {}: stopping",
                                       committed, g.members.size(), g.memberList(), options_.minNodes));
    std::unique_ptr<comm::Communicator> comm;
    std::string state;
    try {
      comm = connectGeneration(g);
      const bool source = g.rankOf(member_) == g.sourceRank();
      state = broadcastBytes(*comm, g.sourceRank(), source ? trainer::toBytes(*committed_) : std::string());
    } catch (const std::exception& e) {
      spdlog::warn("generation {} failed while forming ({}); forming the next one", number, firstLine(e.what()));
      candidates = g.members;
      ++number;
      continue;
    }
    generation_ = g;
    adopt(trainer, std::move(comm), state, before);
    return;
  }
}

void ElasticAgent::adopt(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm, const std::string& state,
                         const Generation& before) {
  auto restored = trainer::fromBytes(state);
  parts_->rebuild(trainer, std::move(comm), generation_);
  trainer.restoreState(restored);
  heartbeat_.setStep(restored.step);
  if (generation_.rankOf(member_) == 0)
    spdlog::info("membership changed: generation {}, {} workers (rank(s) {}), going on from step {}{}",
                 generation_.number, generation_.members.size(), generation_.memberList(), restored.step,
                 describeChange(before, generation_));
  committed_ = std::move(restored);
}

void ElasticAgent::finish() {
  if (options_.elastic && generation_.rankOf(member_) == 0) membership_.markFinished();
}

}  // namespace balancenet::elastic

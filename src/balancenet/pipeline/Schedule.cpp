// Schedule: the stages' action lists and the simulation that proves them deadlock-free.
#include "balancenet/pipeline/Schedule.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {
namespace {

std::string actionText(const Action& action) {
  return (action.kind == Action::Forward ? "F" : "B") + std::to_string(action.micro);
}

struct Dependency {
  int stage;
  Action action;
};

// What must have finished before `action` may start at `stage`: the activation from the stage before, the
// gradient from the stage after, and a stage's own forward of the micro-batch before its backward.
std::vector<Dependency> dependenciesOf(const Action& action, int stage, int stages) {
  if (action.kind == Action::Forward) {
    if (stage == 0) return {};
    return {{stage - 1, action}};
  }
  std::vector<Dependency> deps{{stage, {Action::Forward, action.micro}}};
  if (stage + 1 < stages) deps.push_back({stage + 1, action});
  return deps;
}

}  // namespace

ScheduleKind parseScheduleKind(const std::string& name) {
  if (name == "gpipe") return ScheduleKind::GPipe;
  if (name == "1f1b") return ScheduleKind::OneFOneB;
  throw UsageError("--schedule must be gpipe or 1f1b; got '" + name + "'");
}

std::string scheduleName(ScheduleKind kind) { return kind == ScheduleKind::GPipe ? "gpipe" : "1f1b"; }

std::vector<Action> stageActions(ScheduleKind kind, int stage, int stages, int micros) {
  if (stages < 1 || stage < 0 || stage >= stages || micros < 1)
    throw InternalError(fmt::format("a schedule for stage {} of {} with {} micro-batches", stage, stages, micros));
  std::vector<Action> actions;
  int forwards = 0, backwards = 0;
  auto forward = [&] { actions.push_back({Action::Forward, forwards++}); };
  auto backward = [&] { actions.push_back({Action::Backward, backwards++}); };
  // GPipe: every forward first. 1F1B: as many forwards as there are stages after this one keep the
  // pipeline full, then each forward is answered by the oldest backward, holding activations of at most
  // S - stage micro-batches.
  const int warmUp = kind == ScheduleKind::GPipe ? micros : std::min(stages - 1 - stage, micros);
  while (forwards < warmUp) forward();
  while (forwards < micros) {
    forward();
    backward();
  }
  while (backwards < micros) backward();
  return actions;
}

int peakInFlight(const std::vector<Action>& actions) {
  int inFlight = 0, peak = 0;
  for (const auto& action : actions) {
    inFlight += action.kind == Action::Forward ? 1 : -1;
    peak = std::max(peak, inFlight);
  }
  return peak;
}

std::vector<std::vector<int>> simulateActions(const std::vector<std::vector<Action>>& lists) {
  const int stages = static_cast<int>(lists.size());
  int micros = 0;
  size_t remaining = 0;
  for (const auto& list : lists) {
    for (const auto& action : list) {
      if (action.micro < 0) throw InternalError("a schedule action " + actionText(action));
      micros = std::max(micros, action.micro + 1);
    }
    remaining += list.size();
  }
  // finished[s][kind][m]: the time stage s finished that action; -1 while it has not.
  std::vector<std::array<std::vector<int>, 2>> finished(stages,
                                                        {std::vector<int>(micros, -1), std::vector<int>(micros, -1)});
  auto finishTime = [&](const Dependency& d) -> int& { return finished[d.stage][d.action.kind][d.action.micro]; };
  std::vector<std::vector<int>> starts(stages);
  std::vector<size_t> next(stages, 0);
  for (int time = 0; remaining > 0; ++time) {
    // Every action takes one unit, so at `time` all that were started before have finished: if no stage
    // can start its next action now, the state never changes again.
    std::string stuck;
    bool progressed = false;
    for (int s = 0; s < stages; ++s) {
      if (next[s] == lists[s].size()) continue;
      const Action& action = lists[s][next[s]];
      std::string missing;
      for (const auto& dep : dependenciesOf(action, s, stages)) {
        const int done = finishTime(dep);
        if (done < 0 || done > time)
          missing += (missing.empty() ? "" : " and ") +
                     (dep.stage == s ? "its own " : fmt::format("stage {}'s ", dep.stage)) + actionText(dep.action);
      }
      if (!missing.empty()) {
        stuck +=
            fmt::format("{}stage {} waits to run {} for {}", stuck.empty() ? "" : "; ", s, actionText(action), missing);
        continue;
      }
      starts[s].push_back(time);
      finishTime({s, action}) = time + 1;
      ++next[s];
      --remaining;
      progressed = true;
    }
    if (!progressed) throw InternalError(fmt::format("pipeline schedule deadlock at time {}: {}", time, stuck));
  }
  return starts;
}

std::vector<std::vector<int>> simulateSchedule(ScheduleKind kind, int stages, int micros) {
  std::vector<std::vector<Action>> lists;
  for (int s = 0; s < stages; ++s) lists.push_back(stageActions(kind, s, stages, micros));
  return simulateActions(lists);
}

double analyticalBubble(int stages, int micros) {
  return static_cast<double>(stages - 1) / static_cast<double>(micros + stages - 1);
}

}  // namespace balancenet::pipeline

// Delegation to the candidate of the step, the piggybacked step time, the decision's log line and summary.
#include "balancenet/commchoice/AutoSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"

namespace balancenet::commchoice {
namespace {

std::vector<std::string> namesOf(const std::vector<Candidate>& candidates) {
  std::vector<std::string> names;
  for (const auto& c : candidates) names.push_back(c.name);
  return names;
}

std::vector<double> marginsOf(const std::vector<Candidate>& candidates) {
  std::vector<double> margins;
  for (const auto& c : candidates) margins.push_back(c.lossy ? kLossyMargin : 0);
  return margins;
}

}  // namespace

AutoSync::AutoSync(comm::Collectives& comm, std::vector<Candidate> candidates, TrialSettings settings)
    : comm_(comm), candidates_(std::move(candidates)), trial_(namesOf(candidates_), settings, marginsOf(candidates_)) {
  if (candidates_.empty()) throw RuntimeFailure("--comm auto needs at least one candidate");
}

int AutoSync::candidateFor(int64_t step) {
  if (step != runningStep_) {
    running_ = trial_.modeFor(step);
    runningStep_ = step;
  }
  return running_;
}

void AutoSync::beginStep(const comm::SyncContext& context) {
  trial_.noteSplit(context.step, context.batches);  // before the step's candidate: a moved split may start a trial
  comm::SyncContext withTiming = context;
  ++withTiming.scalars;  // synchronize() sends the last step's time beside the job's scalars
  candidates_[candidateFor(context.step)].sync->beginStep(withTiming);
}

comm::SyncStats AutoSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                      const comm::SyncContext& context) {
  const int which = candidateFor(context.step);
  const int64_t n = scalars.numel();
  auto extended = at::cat({scalars.reshape({-1}), at::full({1}, pendingMs_, scalars.options())});
  auto stats = candidates_[which].sync->synchronize(grads, extended, context);
  scalars.copy_(extended.narrow(0, 0, n).view(scalars.sizes()));
  if (pendingStep_ >= 0 && trial_.record(pendingStep_, extended[n].item<double>() / comm_.size())) logDecision();

  const auto now = std::chrono::steady_clock::now();
  pendingStep_ = haveLastEnd_ ? context.step : -1;
  pendingMs_ = haveLastEnd_ ? std::chrono::duration<double, std::milli>(now - lastEnd_).count() : 0;
  lastEnd_ = now;
  haveLastEnd_ = true;
  return stats;
}

double AutoSync::gainOverExact() const {
  if (trial_.decisions().empty()) return 1;
  const auto& d = trial_.decisions().back();
  double exact = 0;
  for (size_t c = 0; c < candidates_.size(); ++c)
    if (!candidates_[c].lossy && d.medianMs[c] > 0 && (exact <= 0 || d.medianMs[c] < exact)) exact = d.medianMs[c];
  const double chosen = d.medianMs[d.chosen];
  return exact > 0 && chosen > 0 && candidates_[d.chosen].lossy ? exact / chosen : 1;
}

void AutoSync::logDecision() const {
  if (comm_.rank() != 0) return;
  const auto& d = trial_.decisions().back();
  std::vector<std::string> times;
  for (size_t c = 0; c < candidates_.size(); ++c)
    times.push_back(fmt::format("{} {:.1f}{}", candidates_[c].name, d.medianMs[c],
                                d.dropped[c] ? " (dropped after its first round)" : ""));
  const std::string gain = candidates_[d.chosen].lossy
                               ? fmt::format(", {:.2f}x the fastest exact exchange", gainOverExact())
                               : std::string();
  const std::string split = d.split.empty() ? std::string() : fmt::format(", split {}", fmt::join(d.split, ","));
  spdlog::info("--comm auto chose {} at step {} ({}; median step ms at {} workers{}: {}{})", candidates_[d.chosen].name,
               d.step, d.reason, comm_.size(), split, fmt::join(times, ", "), gain);
}

std::string AutoSync::explain() const {
  std::string out = fmt::format(
      "auto: tries {} round-robin on at most the first {} steps (the first round not counted, then the median "
      "step time of each; one {:.0f}x slower than the fastest after a round runs no more), keeps the fastest (a lossy "
      "one only where it is {:.0f}% faster than the exact ones), tries again when "
      "its step time drifts for good or the split moves by more than {:.0f}% of the batch (a trial also starts "
      "again when the split moves that much while it runs: it measures the split the job will run; trials kept "
      "within {:.0f}% of the steps); the choice and its gain are logged and in summary.json\n",
      fmt::join(trial_.candidates(), ", "), trial_.trialSteps(), trial_.settings().dropRatio, 100 * kLossyMargin,
      100 * trial_.settings().splitShift, 100 * trial_.settings().maxTrialShare);
  for (const auto& c : candidates_) out += fmt::format("  {}: {}", c.name, c.sync->explain());
  return out;
}

std::vector<std::vector<at::Tensor>> AutoSync::candidateStates() const {
  std::vector<std::vector<at::Tensor>> parts;
  for (const auto& c : candidates_) parts.push_back(c.sync->saveState());
  return parts;
}

std::vector<at::Tensor> AutoSync::saveState() const { return comm::joinStates(candidateStates()); }

bool AutoSync::loadState(const std::vector<at::Tensor>& state) {
  const auto parts = comm::splitState(candidateStates(), state);
  if (!parts) return false;
  for (size_t i = 0; i < candidates_.size(); ++i) candidates_[i].sync->loadState((*parts)[i]);
  return true;
}

void AutoSync::describe(nlohmann::json& extra) const {
  auto decisions = nlohmann::json::array();
  for (const auto& d : trial_.decisions()) {
    nlohmann::json times = nlohmann::json::object();
    auto dropped = nlohmann::json::array();
    for (size_t c = 0; c < candidates_.size(); ++c) {
      times[candidates_[c].name] = d.medianMs[c];
      if (d.dropped[c]) dropped.push_back(candidates_[c].name);
    }
    decisions.push_back({{"step", d.step},
                         {"reason", d.reason},
                         {"chosen", candidates_[d.chosen].name},
                         {"median_step_ms", times},
                         {"split", d.split},
                         {"dropped", dropped}});
  }
  extra["comm_auto"] = {
      {"candidates", trial_.candidates()},
      {"workers", comm_.size()},
      {"chosen", trial_.decisions().empty() ? "" : candidates_[trial_.decisions().back().chosen].name},
      {"decisions", decisions},
      {"gain_over_exact", gainOverExact()},
      {"trial_steps", trial_.stepsInTrials()}};
}

}  // namespace balancenet::commchoice

// Round-robin trial, median decision, drift check (sustained, within the trial share).
#include "balancenet/commchoice/ModeTrial.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace balancenet::commchoice {

double medianOf(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + mid) + upper) / 2;
}

namespace {

std::vector<double> mediansOf(const std::vector<std::vector<double>>& samples) {
  std::vector<double> medians;
  for (const auto& s : samples) medians.push_back(medianOf(s));
  return medians;
}

}  // namespace

int chooseOf(const std::vector<double>& medians, const std::vector<double>& margins) {
  int best = 0;
  for (size_t c = 0; c < medians.size(); ++c) {
    const double margin = c < margins.size() ? margins[c] : 0;
    if (medians[c] > 0 && (medians[best] <= 0 || medians[c] * (1 + margin) < medians[best])) best = static_cast<int>(c);
  }
  return best;
}

double splitMoved(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from.size() != to.size()) return 1;
  double a = 0, b = 0, moved = 0;
  for (size_t r = 0; r < from.size(); ++r) a += static_cast<double>(from[r]), b += static_cast<double>(to[r]);
  if (a <= 0 || b <= 0) return a == b ? 0 : 1;
  for (size_t r = 0; r < from.size(); ++r)
    moved += std::abs(static_cast<double>(from[r]) / a - static_cast<double>(to[r]) / b);
  return moved / 2;
}

ModeTrial::ModeTrial(std::vector<std::string> candidates, TrialSettings settings, std::vector<double> margins)
    : candidates_(std::move(candidates)),
      settings_(settings),
      margins_(std::move(margins)),
      samples_(candidates_.size()) {
  margins_.resize(candidates_.size(), 0);
}

int ModeTrial::trialSteps() const {
  return (settings_.warmupRounds + settings_.rounds) * static_cast<int>(candidates_.size());
}

void ModeTrial::startTrial(int64_t firstStep, std::string reason) {
  trying_ = true;
  trialStart_ = firstStep;
  trialReason_ = std::move(reason);
  samples_.assign(candidates_.size(), {});
  schedule_.clear();
  roundsScheduled_ = 0;
  dropped_.assign(candidates_.size(), false);
  ranAt_.clear();
  recent_.clear();
  stepsInTrials_ += trialSteps();
}

// The next round: every candidate not dropped. Before the second measured round and each after it, a candidate
// whose best step so far is above dropRatio times the best step of any candidate is dropped (the fastest never is; a
// candidate without a time yet, its step's time still on its way, stays). Best steps, not medians: a stall on the
// fastest's few steps (CI's parallel load tripled one) kept a 4.6x slower exchange in every round, and once a
// candidate has run twice, a stall on one of its steps cannot drop it either.
void ModeTrial::scheduleRound() {
  if (roundsScheduled_ > settings_.warmupRounds && settings_.dropRatio > 0) {
    std::vector<double> best(candidates_.size(), 0);
    double fastest = 0;
    for (size_t c = 0; c < candidates_.size(); ++c) {
      if (dropped_[c] || samples_[c].empty()) continue;
      best[c] = *std::min_element(samples_[c].begin(), samples_[c].end());
      if (fastest <= 0 || best[c] < fastest) fastest = best[c];
    }
    for (size_t c = 0; c < candidates_.size(); ++c)
      if (best[c] > settings_.dropRatio * fastest) dropped_[c] = true;
  }
  for (size_t c = 0; c < candidates_.size(); ++c)
    if (!dropped_[c]) schedule_.push_back(static_cast<int>(c));
  ++roundsScheduled_;
}

std::vector<double> ModeTrial::choosableMedians() const {
  auto medians = mediansOf(samples_);
  for (size_t c = 0; c < medians.size(); ++c)
    if (dropped_[c]) medians[c] = 0;
  return medians;
}

int ModeTrial::modeFor(int64_t step) {
  if (trialStart_ < 0) startTrial(step, trialReason_);
  const int64_t offset = step - trialStart_;
  int which = current_;
  if (trying_) {
    if (offset >= static_cast<int64_t>(schedule_.size()) &&
        roundsScheduled_ < settings_.warmupRounds + settings_.rounds)
      scheduleRound();
    if (offset < static_cast<int64_t>(schedule_.size())) {
      which = schedule_[offset];
    } else {  // the trial's last time is still on its way: the best so far
      which = chooseOf(choosableMedians(), margins_);
    }
  }
  if (offset >= 0 && offset == static_cast<int64_t>(ranAt_.size())) ranAt_.push_back(which);
  return which;
}

bool ModeTrial::record(int64_t step, double stepMs) {
  const int64_t offset = step - trialStart_;
  if (trialStart_ < 0 || offset < 0 || offset >= static_cast<int64_t>(ranAt_.size())) return false;
  const int which = ranAt_[offset];
  if (trying_) {
    // The trial's length is known once its last round is scheduled.
    const bool scheduled = roundsScheduled_ == settings_.warmupRounds + settings_.rounds;
    const auto length = static_cast<int64_t>(schedule_.size());
    if (scheduled && offset >= length) return false;
    // The warm-up rounds are whole rounds: nothing is dropped before the first measured one.
    if (offset >= static_cast<int64_t>(settings_.warmupRounds) * static_cast<int64_t>(candidates_.size()))
      samples_[which].push_back(stepMs);
    if (!scheduled || offset < length - 1) return false;  // times come in step order; one may be missing
    decide(step);
    return true;
  }
  if (which != current_) return false;
  recent_.push_back(stepMs);
  if (static_cast<int>(recent_.size()) > settings_.driftWindow) recent_.erase(recent_.begin());
  const auto& last = decisions_.back();
  const double trialMs = last.medianMs[current_];
  if (static_cast<int>(recent_.size()) < settings_.driftWindow || trialMs <= 0) return false;
  const double drift = medianOf(recent_) / trialMs - 1;
  driftingChecks_ = std::abs(drift) > settings_.driftRatio ? driftingChecks_ + 1 : 0;
  if (driftingChecks_ >= settings_.sustainChecks && step - last.step >= settings_.minStepsBetween && withinShare(step))
    restartAt(-1, fmt::format("step time drifted {:+.0f}%", 100 * drift));
  return false;
}

bool ModeTrial::withinShare(int64_t step) const {
  return static_cast<double>(stepsInTrials_ + trialSteps()) <= settings_.maxTrialShare * static_cast<double>(step + 1);
}

// A new trial from the next step asked for; `step` >= 0: a trial in progress since trialStart_ is abandoned there,
// and its steps not run are not counted.
void ModeTrial::restartAt(int64_t step, std::string reason) {
  if (step >= 0 && trying_ && trialStart_ >= 0) stepsInTrials_ -= trialSteps() - (step - trialStart_);
  trialStart_ = -1;  // the next step asked for starts it
  trialReason_ = std::move(reason);
  trying_ = true;
}

void ModeTrial::noteSplit(int64_t step, const std::vector<int64_t>& batches) {
  if (batches.empty()) return;
  lastSplit_ = batches;
  if (trying_) {
    if (trialStart_ < 0 || trialSplit_.empty()) {  // the trial starts with this step
      trialSplit_ = batches;
      return;
    }
    const double moved = splitMoved(trialSplit_, batches);
    if (moved <= settings_.splitShift || splitRestarts_ >= settings_.maxSplitRestarts || step <= trialStart_) return;
    ++splitRestarts_;
    const std::string first = trialReason_.substr(0, trialReason_.find(" (again"));
    restartAt(step, fmt::format("{} (again from step {}: the split moved {:.0f}%)", first, step, 100 * moved));
    trialSplit_ = batches;
    return;
  }
  const auto& last = decisions_.back();
  const double moved = splitMoved(last.split, batches);
  if (last.split.empty() || moved <= settings_.splitShift || step - last.step < settings_.minStepsBetween ||
      !withinShare(step))
    return;
  restartAt(-1, fmt::format("the split moved {:.0f}%", 100 * moved));
  trialSplit_ = batches;
}

void ModeTrial::decide(int64_t step) {
  TrialDecision d;
  d.step = step;
  d.reason = trialReason_;
  d.medianMs = mediansOf(samples_);
  d.dropped = dropped_;
  d.chosen = chooseOf(choosableMedians(), margins_);
  d.split = lastSplit_;
  stepsInTrials_ -= trialSteps() - static_cast<int64_t>(schedule_.size());  // the steps dropped candidates left
  current_ = d.chosen;
  trying_ = false;
  splitRestarts_ = 0;
  recent_.clear();
  driftingChecks_ = 0;
  decisions_.push_back(std::move(d));
}

}  // namespace balancenet::commchoice

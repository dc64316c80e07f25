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
  ranAt_.clear();
  recent_.clear();
  stepsInTrials_ += trialSteps();
}

int ModeTrial::modeFor(int64_t step) {
  if (trialStart_ < 0) startTrial(step, trialReason_);
  const int64_t offset = step - trialStart_;
  int which = current_;
  if (trying_) {
    if (offset < trialSteps()) {
      which = static_cast<int>(offset % static_cast<int64_t>(candidates_.size()));
    } else {  // the trial's last time is still on its way: the best so far
      which = chooseOf(mediansOf(samples_), margins_);
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
    if (offset >= trialSteps()) return false;
    const int64_t round = offset / static_cast<int64_t>(candidates_.size());
    if (round >= settings_.warmupRounds) samples_[which].push_back(stepMs);
    if (offset < trialSteps() - 1) return false;  // times come in step order; one may be missing (the job's first)
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
  const bool withinShare =
      static_cast<double>(stepsInTrials_ + trialSteps()) <= settings_.maxTrialShare * static_cast<double>(step + 1);
  if (driftingChecks_ >= settings_.sustainChecks && step - last.step >= settings_.minStepsBetween && withinShare) {
    trialStart_ = -1;  // the next step asked for starts it
    trialReason_ = fmt::format("step time drifted {:+.0f}%", 100 * drift);
    trying_ = true;
  }
  return false;
}

void ModeTrial::decide(int64_t step) {
  TrialDecision d;
  d.step = step;
  d.reason = trialReason_;
  d.medianMs = mediansOf(samples_);
  d.chosen = chooseOf(d.medianMs, margins_);
  current_ = d.chosen;
  trying_ = false;
  recent_.clear();
  driftingChecks_ = 0;
  decisions_.push_back(std::move(d));
}

}  // namespace balancenet::commchoice

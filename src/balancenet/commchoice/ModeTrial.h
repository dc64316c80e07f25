// ModeTrial: which gradient exchange to run at each step under --comm auto, decided from measured step times.
// Pure and deterministic: every rank feeds it the same agreed times, so every rank runs the same mode.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::commchoice {

struct TrialSettings {
  int warmupRounds = 1;       // rounds whose times are dropped (a mode's first use connects or allocates)
  int rounds = 3;             // measured rounds; a mode's time is the median of its steps
  int driftWindow = 8;        // steps of the chosen mode whose median is compared with its trial time
  double driftRatio = 0.25;   // |window median / trial median - 1| above this starts a new trial ...
  int minStepsBetween = 100;  // ... but not sooner than this many steps after the last decision,
  int sustainChecks = 8;      // ... only when the drift held at this many steps running (not a passing stall),
  // ... and only when the trials, this one with them, stay within this share of the steps so far: each trial runs
  // the slower modes too (the demo's first run re-tried 4 times in 800 steps before this cap).
  double maxTrialShare = 0.05;
  // A candidate whose best step so far is above this times the best step of any runs no more rounds of the trial (0:
  // every candidate runs every round): on a slow link the float32 exchanges' steps are several times the compressed
  // ones' (8x on T-slow), and more rounds of them cost more than the trial can win back in a short job. 3x, not less:
  // the first measured round has one step of each, and a passing stall may double one.
  double dropRatio = 3.0;
  // The split (every rank's samples) a trial measures is the one the job runs after it: where the split moved more
  // than this share of the global batch from the trial's first step (the policy still settling: it rebalances every
  // 5 steps from the speed prior), the trial starts again with the new split, at most maxSplitRestarts times; once
  // decided, a split that moved this much from the decision's starts a new trial as a lasting drift does.
  double splitShift = 0.10;
  int maxSplitRestarts = 3;
};

// How much of the global batch moved between two splits: half the sum of the shares' differences (0: the same
// proportions, 1: disjoint; splits over another number of workers: 1).
double splitMoved(const std::vector<int64_t>& from, const std::vector<int64_t>& to);

// One decision: the step it took effect at, the measured median of every candidate, what won and why.
struct TrialDecision {
  int64_t step = 0;
  std::vector<double> medianMs;  // per candidate, in the candidates' order
  std::vector<bool> dropped;     // per candidate: left out of the trial's later rounds (dropRatio)
  int chosen = 0;
  std::string reason;          // "start", "step time drifted +31%", "the split moved 23%"
  std::vector<int64_t> split;  // the split the decision was made with (empty: none noted)
};

// Candidates run round-robin (interleaved, so a split that is still settling or a slow warm-up weighs on
// every candidate alike): warmupRounds + rounds rounds (from the second measured round on, without the candidates
// whose best step is already dropRatio times the best of any), then the one with the least median step time runs
// until its time drifts for good, within a cap on the steps spent trying. Ties go to the earlier candidate (the list
// is ordered by preference). `margins` (one per candidate, default 0): how much faster than the choice among the
// candidates before it a candidate must be to win (0.1: its median times 1.1 below theirs); a lossy exchange
// trades accuracy for time, so it must win clearly, not by a trial's noise.
class ModeTrial {
 public:
  ModeTrial(std::vector<std::string> candidates, TrialSettings settings = {}, std::vector<double> margins = {});

  // The split step `step` runs with, before modeFor(step) (where it is known): see TrialSettings::splitShift.
  void noteSplit(int64_t step, const std::vector<int64_t>& batches);
  // The candidate (index) step `step` runs. Steps are asked for in increasing order, each once.
  int modeFor(int64_t step);
  // The agreed time of step `step` (which ran modeFor(step)); may come one step late, before or after
  // modeFor(step + 1), in step order; a step's time may be missing. Returns true when it completed a decision.
  bool record(int64_t step, double stepMs);

  bool decided() const { return !decisions_.empty() && !trying_; }
  const std::vector<std::string>& candidates() const { return candidates_; }
  const std::vector<double>& margins() const { return margins_; }
  const TrialSettings& settings() const { return settings_; }
  const std::vector<TrialDecision>& decisions() const { return decisions_; }
  int trialSteps() const;                                   // steps one trial takes at most (none dropped)
  int64_t stepsInTrials() const { return stepsInTrials_; }  // steps of every trial started so far

 private:
  void startTrial(int64_t firstStep, std::string reason);
  void scheduleRound();
  std::vector<double> choosableMedians() const;  // this trial's medians, 0 (never chosen) for a dropped candidate
  void decide(int64_t step);
  bool withinShare(int64_t step) const;  // whether one more trial keeps the trials within maxTrialShare
  void restartAt(int64_t step, std::string reason);

  std::vector<std::string> candidates_;
  TrialSettings settings_;
  std::vector<double> margins_;
  bool trying_ = true;
  int64_t trialStart_ = -1;  // first step of the current trial (-1: set by the first modeFor)
  std::string trialReason_ = "start";
  std::vector<std::vector<double>> samples_;  // per candidate, this trial's measured times
  std::vector<int> schedule_;                 // the candidate of each step of this trial, a round at a time
  int roundsScheduled_ = 0;
  std::vector<bool> dropped_;   // per candidate, this trial
  int current_ = 0;             // the chosen candidate once decided
  std::vector<double> recent_;  // the chosen candidate's recent times (drift)
  int driftingChecks_ = 0;      // drift checks running that found the time drifted
  int64_t stepsInTrials_ = 0;
  std::vector<int64_t> trialSplit_;  // the split of the current trial's first step
  std::vector<int64_t> lastSplit_;   // the latest noted
  int splitRestarts_ = 0;            // of the current trial
  std::vector<int> ranAt_;           // candidate per step since trialStart_, for records that come late
  std::vector<TrialDecision> decisions_;
};

// The median of `values` (0 when empty).
double medianOf(std::vector<double> values);

// The winner of one trial: in list order, a candidate with a time (median > 0) replaces the choice so far where its
// median times (1 + its margin) is below the choice's; a tie goes to the earlier.
int chooseOf(const std::vector<double>& medians, const std::vector<double>& margins);

}  // namespace balancenet::commchoice

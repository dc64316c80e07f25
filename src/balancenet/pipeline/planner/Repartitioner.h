// Repartitioner: live re-partitioning. It compares each rank's measured compute with what the plan
// predicted, rescales that node's profiled block costs by the ratio (a node that slowed down by 2 has
// every block cost twice as much), re-plans with the ranks in their slots, and moves the block
// boundaries only when the predicted gain beats the measurement noise (the balanced policy's hysteresis).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/pipeline/PartitionController.h"
#include "balancenet/pipeline/planner/Planner.h"

namespace balancenet::pipeline {

struct RepartitionOptions {
  // Steps between decisions (--rebalance-every); a decision looks at the steps since the last one.
  int every = 5;
  // Move only when the re-planned step is predicted faster by more than this fraction...
  static constexpr double kDefaultHysteresis = 0.05;
  double hysteresis = kDefaultHysteresis;
  // ...and by more than this many relative standard errors of the nodes' measured/predicted ratios over the
  // window (the median over ranks): 4 workers on 2 cores vary +-10% per step.
  static constexpr double kDefaultNoiseMultiplier = 3.0;
  double noiseMultiplier = kDefaultNoiseMultiplier;
  bool live = true;  // false (--keep-partition): log and compare, never move
  // Cuts to measure once, early, one decision window each (live only; those that do not fit memory are
  // skipped): the run then keeps whichever it measured fastest. A profile taken before training can mislead
  // the planner (a stage's cost under load depends on the stage, not only on the node), and a plan must
  // not leave a run slower than the cuts a user would otherwise pick (uniform, equal FLOPs).
  std::vector<Partition> baselines;
  // A partition's step time measured again that differs from its last measurement by more than this
  // fraction (and than the noise) means the nodes changed: what was measured before no longer holds.
  static constexpr double kDefaultChangeThreshold = 0.15;
  double changeThreshold = kDefaultChangeThreshold;
};

// One decision (a row of partitions.csv).
struct RepartitionEvent {
  int64_t step = 0;
  std::string from, to;              // partitions, Partition::str(); equal when it stayed
  double predictedCurrentMs = 0;     // the current placement, with the rescaled costs
  double predictedBestMs = 0;        // the best re-plan, same costs
  double measuredStepMs = 0;         // mean over the window
  double noise = 0;                  // relative standard error used in the threshold
  std::vector<double> speedFactors;  // per rank: measured / profiled compute
  bool moved = false;
  std::string reason;  // "gain 23% > threshold 5%", "gain 1% below threshold 5%", "no measurements", ...
};

class Repartitioner : public PartitionController {
 public:
  // `input`: the profile the first plan was made from; `initial`: that plan (predicted).
  Repartitioner(PlanInput input, Placement initial, RepartitionOptions options);

  std::optional<Partition> afterStep(const StepTimes& times) override;
  // partitions.csv (every decision) and stage_times.csv (per partition in force and per rank: predicted
  // and mean measured compute ms, and the step's predicted and measured ms).
  void writeOutputs(const std::string& runDir) const override;

  const Placement& current() const { return current_; }
  const std::vector<RepartitionEvent>& events() const { return events_; }
  static std::string partitionsCsvHeader();
  std::string partitionsCsv() const;
  std::string stageTimesCsv() const;

 private:
  PlanInput input_;  // the profile as measured before training
  Placement current_;
  RepartitionOptions options_;
  std::vector<StepTimes> window_;  // since the last decision
  // Per rank, since the cut in force was moved to or the nodes changed (at most kEvidenceSteps, the latest):
  // each step's measured compute and what the profile predicted for it.
  struct Evidence {
    std::vector<double> measured, profiled;
  };
  static constexpr size_t kEvidenceSteps = 100;
  std::vector<Evidence> evidence_;
  // The median step ms last measured for each partition tried (Partition::str()), and its relative noise;
  // cleared when the nodes change.
  struct Measured {
    double stepMs = 0;
    double noise = 0;
    Partition partition;
  };
  std::map<std::string, Measured> measured_;
  size_t nextBaseline_ = 0;
  // While a baseline is on trial (its first window): the cut it was tried from. The trial ends at the next
  // decision, by the two windows' medians alone: a trial is one experiment, not a move to guard against
  // flapping, so one noisy window must not keep a run on a slower baseline.
  std::optional<std::string> trialFrom_;
  // One decision window: per rank, each step's measured compute and what the profile predicted for it
  // (complete: every step measured every rank, the predictions positive), the mean and the median step ms.
  struct WindowSamples {
    std::vector<std::vector<double>> measured, profiled;
    bool complete = true;
    double meanStepMs = 0;
    Measured stepTime;
  };
  // Whether the nodes changed since what was measured before, and why (for partitions.csv).
  struct Change {
    bool changed = false;
    std::string note;
  };
  // The phases of afterStep(), in order: add the step to the epoch and the window; once the window is full,
  // measure it; clear what was measured when the nodes changed; add the window to the evidence (the event's
  // speed factors and noise); then, at the costs rescaled by them, a measured alternative or a re-plan.
  void recordStep(const StepTimes& times);
  WindowSamples measureWindow() const;
  // Clears what was measured when the nodes changed; records the window's step time either way.
  Change detectChange(const WindowSamples& samples);
  // Why the nodes changed where a rank's speed in the window left its evidence's; nothing otherwise.
  std::optional<std::string> speedChangeNote(const WindowSamples& samples) const;
  void updateEvidence(const WindowSamples& samples, RepartitionEvent& event);
  // Whether moving to `best` gains more than the threshold and no measurement contradicts it; sets the
  // event's predicted best and its reason (after `reason`).
  bool worthMoving(const Placement& best, double predictedNowMs, const Measured& window, const std::string& reason,
                   RepartitionEvent& event) const;
  // Adds the decision to events_; returns the partition moved to, if it moved.
  std::optional<Partition> logDecision(const RepartitionEvent& event);
  // Moves to `target` (its prediction at the rescaled costs) at the end of `step`.
  void moveTo(const Placement& target, int64_t step, RepartitionEvent& event);
  // The measured alternatives: a baseline to try, or a measured-faster partition; nothing otherwise.
  // `why` gets the reason for partitions.csv (with nothing returned: the baselines it skipped, if any).
  // `scaled` and `predictedNowMs`: the model refreshed by this window, and what it predicts for the cut in force.
  std::optional<Partition> measuredChoice(const Measured& now, const PlanInput& scaled, double predictedNowMs,
                                          std::string& why);
  std::vector<RepartitionEvent> events_;
  // Per partition in force: its predicted placement and the measured sums (for stage_times.csv).
  struct Epoch {
    int64_t firstStep = 0, lastStep = 0;
    Placement predicted;
    std::vector<double> measuredComputeSum;  // by rank
    double measuredStepSum = 0;
    int64_t steps = 0;
  };
  std::vector<Epoch> epochs_;
};

}  // namespace balancenet::pipeline

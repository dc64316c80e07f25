// AutoSync: --comm auto. Runs the candidate exchanges on the job's own steps (they all sum the exact gradient,
// so the steps train normally while they are timed) and keeps the fastest (ModeTrial).
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Collectives.h"
#include "balancenet/commchoice/ModeTrial.h"

namespace balancenet::commchoice {

struct Candidate {
  std::string name;  // as --comm takes it
  std::unique_ptr<comm::GradientSync> sync;
  bool lossy = false;  // sends fewer bits than float32 (--allow-lossy-comm): must beat the exact ones by kLossyMargin
};

// A lossy candidate wins only where its median step is 10% below the choice among those before it: a trial's medians
// vary by a few per cent from run to run, and compression that only ties costs accuracy for nothing (fast links).
inline constexpr double kLossyMargin = 0.10;

// A step's time is the time between the ends of two syncs on a rank (update, data, compute and sync: what a mode
// changes and what it overlaps), averaged over the ranks. The average travels with the next step's gradients (one
// more float in the scalars), so deciding costs no message of its own and every rank decides alike.
class AutoSync : public comm::GradientSync {
 public:
  AutoSync(comm::Collectives& comm, std::vector<Candidate> candidates, TrialSettings settings = {});

  void beginStep(const comm::SyncContext& context) override;
  comm::SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                              const comm::SyncContext& context) override;
  std::string explain() const override;
  void describe(nlohmann::json& extra) const override;
  // Every candidate's state, in candidate order (each keeps its own error feedback, used or not).
  std::vector<at::Tensor> saveState() const override;
  bool loadState(const std::vector<at::Tensor>& state) override;

  const ModeTrial& trial() const { return trial_; }
  // The latest decision's gain: the fastest exact candidate's median over the chosen one's (1 when an exact one won
  // or none is exact).
  double gainOverExact() const;

 private:
  int candidateFor(int64_t step);
  std::vector<std::vector<at::Tensor>> candidateStates() const;
  void logDecision() const;

  comm::Collectives& comm_;
  std::vector<Candidate> candidates_;
  ModeTrial trial_;
  int64_t runningStep_ = -1;  // the step whose candidate is chosen
  int running_ = 0;
  std::chrono::steady_clock::time_point lastEnd_{};
  bool haveLastEnd_ = false;
  int64_t pendingStep_ = -1;  // the step whose time goes out with the next sync
  double pendingMs_ = 0;
};

}  // namespace balancenet::commchoice

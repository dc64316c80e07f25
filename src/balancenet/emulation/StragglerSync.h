// StragglerSync: makes this node a slower one, by sleeping after its real compute and before the sync.
#pragma once
#include <memory>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/emulation/Pacing.h"

namespace balancenet::emulation {

// Two modes, both wrapping the real strategy (the trainer and the policies know nothing of them):
// - Relative (--slowdown s): after a real forward+backward of t ms, sleep (s - 1) * t.
// - Paced (--node-speed v samples/s): the compute phase lasts max(t, b / v): sleep the difference.
//   Contention-free while the real compute is faster than the pace; a warning says when it is not.
// The sleep is reported as emulated compute, so measurements see a slower node, as on real hardware.
// Under an overlapping strategy the node's gradients have left during backward, before the sleep:
// its peers then wait at the next step's first message instead of this one; step times are the same.
class StragglerSync : public comm::GradientSync {
 public:
  enum class Mode { Relative, Paced };
  StragglerSync(std::unique_ptr<comm::GradientSync> inner, Mode mode, FactorSchedule factors, int rank);
  void beginStep(const comm::SyncContext& context) override { inner_->beginStep(context); }
  comm::SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                              const comm::SyncContext& context) override;
  bool updatesParameters() const override { return inner_->updatesParameters(); }
  std::string explain() const override { return inner_->explain(); }
  void describe(nlohmann::json& extra) const override { inner_->describe(extra); }
  std::vector<at::Tensor> saveState() const override { return inner_->saveState(); }
  bool loadState(const std::vector<at::Tensor>& state) override { return inner_->loadState(state); }

 private:
  std::unique_ptr<comm::GradientSync> inner_;
  Mode mode_;
  FactorSchedule factors_;
  int rank_;
  int64_t lastWarningStep_ = -1000;
};

}  // namespace balancenet::emulation

// LossScaler: fp16's dynamic loss scaling, the rule of torch.amp.GradScaler. The loss is multiplied by the scale
// before backward, so that small gradients stay above fp16's smallest number instead of becoming zero; a step
// whose summed gradient holds an inf or a NaN is skipped and the scale halved; after `growthInterval` applied steps
// in a row it doubles. Pure: the trainer says whether each step's gradient was finite.
#pragma once
#include <cstdint>

namespace balancenet::precision {

struct LossScalerOptions {
  double initialScale = 65536.0;  // GradScaler's 2^16
  double growthFactor = 2.0;
  double backoffFactor = 0.5;
  int64_t growthInterval = 2000;
  // Skipped steps in a row that end the run: by then the scale has fallen by 2^50, so what overflows is the
  // forward pass or the weights themselves, which no scale mends.
  int64_t maxSkipsInARow = 50;
};

// All of it goes into checkpoints, so a resumed run scales and skips as the uninterrupted one would.
struct LossScalerState {
  double scale = 0;
  int64_t goodSteps = 0;  // applied steps since the scale last changed
  int64_t skipsInARow = 0;
  int64_t skippedSteps = 0;  // in the whole run
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {});
  double scale() const { return state_.scale; }
  int64_t skippedSteps() const { return state_.skippedSteps; }
  // After a step's gradient was summed, with the scale it was computed at: whether to apply it. The scale for the
  // next step changes here. Throws RuntimeFailure (one line) at maxSkipsInARow skipped steps in a row.
  bool update(bool gradientFinite);
  const LossScalerState& state() const { return state_; }
  void restore(const LossScalerState& state) { state_ = state; }

 private:
  LossScalerOptions options_;
  LossScalerState state_;
};

}  // namespace balancenet::precision

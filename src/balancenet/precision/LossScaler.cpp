#include "balancenet/precision/LossScaler.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::precision {

LossScaler::LossScaler(LossScalerOptions options) : options_(options) { state_.scale = options_.initialScale; }

bool LossScaler::update(bool gradientFinite) {
  if (gradientFinite) {
    state_.skipsInARow = 0;
    if (++state_.goodSteps >= options_.growthInterval) {
      state_.scale *= options_.growthFactor;
      state_.goodSteps = 0;
    }
    return true;
  }
  ++state_.skippedSteps;
  state_.goodSteps = 0;
  if (++state_.skipsInARow >= options_.maxSkipsInARow)
    throw RuntimeFailure(fmt::format(
        "--precision fp16: the gradient was not finite in {} steps in a row (loss scale down to {:g}): the loss or "
        "the weights overflow fp16 itself; try --precision bf16 or a smaller --lr",
        state_.skipsInARow, state_.scale));
  state_.scale *= options_.backoffFactor;
  return false;
}

}  // namespace balancenet::precision

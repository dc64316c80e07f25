// Learning-rate schedules.
#include "balancenet/trainer/LrSchedule.h"

#include <algorithm>
#include <cmath>

#include "balancenet/core/Error.h"

namespace balancenet::trainer {

double LrSchedule::at(int64_t step) const {
  if (step < warmupSteps) return baseLr * static_cast<double>(step + 1) / warmupSteps;
  const int64_t t = step - warmupSteps;
  switch (decay) {
    case Decay::Constant:
      return baseLr;
    case Decay::Cosine: {
      const int64_t span = std::max<int64_t>(1, totalSteps - warmupSteps);
      const double progress = std::min(1.0, static_cast<double>(t) / span);
      return minLr + (baseLr - minLr) * 0.5 * (1 + std::cos(M_PI * progress));
    }
    case Decay::Step:
      return baseLr * std::pow(gamma, static_cast<double>(t / std::max<int64_t>(1, stepEvery)));
  }
  return baseLr;
}

LrSchedule::Decay LrSchedule::parseDecay(const std::string& name) {
  if (name == "constant") return Decay::Constant;
  if (name == "cosine") return Decay::Cosine;
  if (name == "step") return Decay::Step;
  throw UsageError("--lr-decay must be constant, cosine or step; got '" + name + "'");
}

}  // namespace balancenet::trainer

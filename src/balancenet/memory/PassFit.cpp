// PassFit: the budget left after the state, in whole samples; ceilings for the micro-steps.
#include "balancenet/memory/PassFit.h"

#include <cmath>

#include "balancenet/core/Error.h"

namespace balancenet::memory {

int64_t samplesPerPass(const WorkerFootprint& footprint, double budgetBytes) {
  if (budgetBytes <= 0 || footprint.bytesPerSample <= 0) return kUnlimited;
  const double left = budgetBytes - static_cast<double>(footprint.stateBytes);
  if (left < static_cast<double>(footprint.bytesPerSample)) return 0;
  const double samples = std::floor(left / static_cast<double>(footprint.bytesPerSample));
  return samples >= static_cast<double>(kUnlimited) ? kUnlimited : static_cast<int64_t>(samples);
}

int64_t microStepsFor(int64_t share, int64_t perPass) {
  if (perPass < 1) throw InternalError("micro-steps asked for passes of no sample");
  if (share <= perPass) return 1;
  return (share + perPass - 1) / perPass;
}

int64_t shareCapFor(int64_t microSteps, int64_t perPass) {
  if (perPass == kUnlimited || microSteps < 1) return kUnlimited;
  if (perPass > kUnlimited / microSteps) return kUnlimited;
  return microSteps * perPass;
}

}  // namespace balancenet::memory

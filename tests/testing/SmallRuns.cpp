// SmallRuns: option values shared by the equivalence tests.
#include "testing/SmallRuns.h"

namespace balancenet::testing {

trainer::TrainerOptions sgdRun(int64_t steps, int64_t globalBatch, uint64_t seed) {
  trainer::TrainerOptions o;
  o.steps = steps;
  o.globalBatch = globalBatch;
  o.seed = seed;
  o.lr.baseLr = 0.1;
  o.optimizer.momentum = 0.9;
  o.optimizer.weightDecay = 1e-4;
  o.evalAtEnd = false;
  o.progressSeconds = 0;
  return o;
}

}  // namespace balancenet::testing

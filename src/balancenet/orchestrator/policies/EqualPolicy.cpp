// EqualPolicy: Split::equal(B, N); the remainder goes to the first ranks.
#include "balancenet/orchestrator/policies/EqualPolicy.h"

#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

Decision EqualPolicy::decide(const PolicyInput& input) {
  return {Split::equal(input.globalBatch, worldSizeOf(input)), "equal split"};
}

}  // namespace balancenet::orchestrator

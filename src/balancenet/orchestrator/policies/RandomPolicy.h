// RandomPolicy: a uniformly random split per decision (a control), reproducible from (seed, step).
#pragma once
#include <cstdint>

#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

class RandomPolicy : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "random"; }
  // Every node >= 1, sums to B; the same (seed, input.step, N, B) always gives the same split.
  Decision decide(const PolicyInput& input) override;

 private:
  uint64_t seed_;
};

}  // namespace balancenet::orchestrator

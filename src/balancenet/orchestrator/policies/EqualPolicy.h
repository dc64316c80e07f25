// EqualPolicy: the paper's "n/1" baseline: B split equally, whatever the nodes measured.
#pragma once
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

class EqualPolicy : public Policy {
 public:
  std::string name() const override { return "equal"; }
  Decision decide(const PolicyInput& input) override;
};

}  // namespace balancenet::orchestrator

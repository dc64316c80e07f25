// StaticPolicy: one fixed split given at construction (--split), used for every decision.
#pragma once
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

class StaticPolicy : public Policy {
 public:
  explicit StaticPolicy(Split split);
  std::string name() const override { return "static"; }
  // Throws InternalError if the split does not match the input's N (the launcher has checked --split against
  // the job already: a mismatch here is a bug). For another B than the split's (an adaptive global batch) it
  // returns the split's proportions apportioned to that B.
  Decision decide(const PolicyInput& input) override;

 private:
  Split split_;
};

}  // namespace balancenet::orchestrator

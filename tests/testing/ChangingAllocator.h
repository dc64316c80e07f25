// ChangingAllocator: a split that changes every step, so tests see the trainer take the allocation per step.
#pragma once
#include <utility>
#include <vector>

#include "balancenet/orchestrator/Allocator.h"

namespace balancenet::testing {

// Step s uses splits[s % splits.size()].
class ChangingAllocator : public orchestrator::Allocator {
 public:
  explicit ChangingAllocator(std::vector<Split> splits) : splits_(std::move(splits)) {}
  Split splitFor(int64_t step) override { return splits_[step % splits_.size()]; }

 private:
  std::vector<Split> splits_;
};

}  // namespace balancenet::testing

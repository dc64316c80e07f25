// StaticAllocator: one fixed split for the whole run (--split, or an equal split).
#pragma once
#include "balancenet/orchestrator/Allocator.h"

namespace balancenet::orchestrator {

class StaticAllocator : public Allocator {
 public:
  explicit StaticAllocator(Split split);
  Split splitFor(int64_t step) override;

 private:
  Split split_;
};

}  // namespace balancenet::orchestrator

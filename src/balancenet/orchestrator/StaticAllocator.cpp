// A split that never changes.
#include "balancenet/orchestrator/StaticAllocator.h"

namespace balancenet::orchestrator {

StaticAllocator::StaticAllocator(Split split) : split_(std::move(split)) {}

Split StaticAllocator::splitFor(int64_t) { return split_; }

}  // namespace balancenet::orchestrator

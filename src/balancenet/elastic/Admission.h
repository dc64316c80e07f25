// Admission: rank 0's decision at a step boundary about the workers waiting to join, shared by the C++ workers'
// elastic agent and the Python session.
#pragma once
#include <cstdint>

#include "balancenet/elastic/Membership.h"

namespace balancenet::elastic {

// Admits waiting joiners into generation `next`, to form at the boundary after step + 1 (every rank is at most
// one step from rank 0, so each sees the plan in time), within `maxWorkers`; refuses them all when the job
// already has one worker per sample of `globalBatch` (a split gives each worker at least one). `workers`: the
// current generation's size. Returns whether a plan was announced.
bool admitJoiners(Membership& membership, int workers, int next, int64_t step, int maxWorkers, int64_t globalBatch);

}  // namespace balancenet::elastic

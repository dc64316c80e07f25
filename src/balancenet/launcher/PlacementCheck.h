// PlacementCheck: before any worker starts, the model's cut into pipeline stages and each worker's estimated
// memory against --memory-limit-mb, so a placement that cannot run is one error line, not one per worker.
#pragma once
#include "balancenet/launcher/JobConfig.h"

namespace balancenet::launcher {

// Resolves --partition against the model's blocks (a bad one is a UsageError) and, with --memory-limit-mb,
// refuses (UsageError) a placement where some worker's estimate exceeds the limit, suggesting the smallest
// --pipeline-stages K in {2, 4, 8, ...} dividing the world whose uniform placement would fit. Builds the model
// only when there is something to check: --pipeline-stages > 1 or --memory-limit-mb > 0.
void checkPlacement(const JobConfig& c);

}  // namespace balancenet::launcher

// The checks a launcher runs before starting workers: data set, stage choice, placement.
#include "balancenet/cli/LaunchChecks.h"

#include "balancenet/cli/ForkBudget.h"
#include "balancenet/cli/PlacementCheck.h"
#include "balancenet/cli/StageChoice.h"
#include "balancenet/data/MnistDataset.h"

namespace balancenet::cli {
using job::JobConfig;

namespace {

// Bad data is the most common mistake; catching it here gives one line instead of one per worker.
void checkDatasetReadable(const std::string& dir) {
  data::requireModelImageSize(data::loadMnist(dir, /*train=*/false), dir);
  data::requireModelImageSize(data::loadMnist(dir, /*train=*/true), dir);
}

}  // namespace

JobConfig checkBeforeLaunch(const JobConfig& config) {
  checkDatasetReadable(config.dataDir);
  JobConfig resolved = config.pipeline.stages == job::kAutoStages ? chooseStages(config) : config;
  checkPlacement(resolved);
  checkForkBudget(resolved);  // before the first fork: a count that cannot fit in memory is refused here
  return resolved;
}

}  // namespace balancenet::cli

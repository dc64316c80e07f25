// The checks a launcher runs before starting workers: data set, stage choice, placement.
#include "balancenet/cli/LaunchChecks.h"

#include "balancenet/cli/ForkBudget.h"
#include "balancenet/cli/PlacementCheck.h"
#include "balancenet/cli/StageChoice.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::cli {
using job::JobConfig;

namespace {

// Bad data is the most common mistake, and a model that does not take the data's samples the next: caught
// here, each is one line instead of one per worker. The model is sized for the data from here on.
JobConfig fitToData(const JobConfig& config) {
  JobConfig fitted = config;
  const data::DatasetPair sets = data::openDataset(config.data);
  models::fitModelToData(fitted.model, sets.train->spec());
  objective::Objective(sets.train->spec(), config.objective);
  models::buildModel(fitted.model);
  return fitted;
}

}  // namespace

JobConfig checkBeforeLaunch(const JobConfig& config) {
  const JobConfig fitted = fitToData(config);
  JobConfig resolved = fitted.pipeline.stages == job::kAutoStages ? chooseStages(fitted) : fitted;
  checkPlacement(resolved);
  checkForkBudget(resolved);  // before the first fork: a count that cannot fit in memory is refused here
  return resolved;
}

}  // namespace balancenet::cli

// GenerationConfig: the job as one elastic generation of it sees it (who is left, at which step the split log
// goes on), shared by the C++ workers and the Python session.
#pragma once
#include <vector>

#include "balancenet/elastic/Membership.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/orchestrator/Orchestrator.h"

namespace balancenet::worker {

// The first row of splits.csv: the initial split for the launched group; for a later one, the
// membership change, at the step it goes on from, after the rows already there.
orchestrator::OrchestratorOptions splitLogStart(const elastic::Generation& g, int workersBefore);

// The job's configuration as one generation of it sees it: after a membership change the global batch
// is split equally over the new world (the orchestrator re-balances from there), and the emulated
// node speeds and memory caps stay with the workers they were given to, whatever their new rank.
job::JobConfig forMembers(const job::JobConfig& c, const std::vector<int>& members);

}  // namespace balancenet::worker

// RunOutputs: gathers every rank's step records to rank 0, which writes steps.csv and summary.json.
#pragma once
#include <string>
#include <vector>

#include "balancenet/comm/Communicator.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepRecord.h"

namespace balancenet::trainer {

// Collective: every rank calls it with the same number of records. Fills the summary's step-derived
// fields (mean and per-100 weight-update time) on every rank; rank 0 writes the files atomically.
void writeRunOutputs(comm::Communicator& comm, const std::vector<metrics::StepRecord>& mine,
                     metrics::RunSummary& summary, const std::string& runDir);

}  // namespace balancenet::trainer

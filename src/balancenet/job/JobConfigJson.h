// JobConfigJson: the job as its launcher resolved it, written once for its processes (JSON in
// BALANCENET_JOB_CONFIG) and read back by them: a worker of balancenet's launcher, and a launched script's
// `import balancenet.torch`, parse no flags. Who a process is (its rank, the store's address, the job token) is
// not part of it: each reads that from its own environment (launch/WorkerEnvironment.h).
#pragma once
#include <string>

#include "balancenet/job/JobConfig.h"

namespace balancenet::job {

// Every setting of `c` but the process's own identity (worker, server), the job token, and what a worker
// measures or builds itself (trainer.capacity, trainer.metricStyle, the model's layer factories).
std::string jobConfigJson(const JobConfig& c);

// The JobConfig jobConfigJson wrote. Throws UsageError (one line) when `text` is not such a document, or one
// written by another version of balancenet.
JobConfig jobConfigFromJson(const std::string& text);

}  // namespace balancenet::job

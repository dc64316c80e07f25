// StageChoice: --pipeline-stages auto. Before any worker starts, the launcher profiles the model on this host,
// ranks every shape (data parallelism, pure pipeline, stages with replicas) by predicted step time under
// each worker's slowdown and memory cap, prints the ranking and runs the best shape.
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::cli {

// `c` with --pipeline-stages auto resolved: the job as if started with the chosen --pipeline-stages S (and
// --partition auto when S > 1, plain data parallelism with the policy given when S = 1), validated again; its
// argv says so, so the workers parse the same. Prints the ranked shapes (one line each) and the choice to
// stderr. Throws UsageError when no shape fits every worker's memory.
job::JobConfig chooseStages(const job::JobConfig& c);

}  // namespace balancenet::cli

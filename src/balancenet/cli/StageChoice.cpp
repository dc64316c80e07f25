// StageChoice: the launcher's profile, ranking and choice of the job's shape for --pipeline-stages auto.
#include "balancenet/cli/StageChoice.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "balancenet/cli/LocalProfile.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

constexpr size_t kShownShapes = 8;

LocalJob localJobOf(const JobConfig& c) {
  LocalJob job;
  job.model = c.model;
  job.nodes = c.launch.worldSize();
  job.globalBatch = c.trainer.globalBatch;
  job.microBatches = c.pipeline.microBatches;  // 0 unless --micro-batches was given
  job.schedule = c.pipeline.schedule;
  job.optimizer = c.trainer.optimizer.name;
  for (int node = 0; node < job.nodes; ++node)
    job.slowdown.push_back(c.emulation.slowdown.empty() ? 1.0 : c.emulation.slowdown.at(0, node));
  job.memoryLimitMb = c.memoryLimitMb;
  job.netDelayMs = c.emulation.netDelayMs;
  job.netBandwidthMbps = c.emulation.netBandwidthMbps;
  return job;
}

// The words after "train" in the launcher's argv, then what the choice fixes (flags take their last value).
std::vector<std::string> argsWithShape(const JobConfig& c, int stages) {
  std::vector<std::string> args = trainWords(c);
  args.insert(args.end(), {"--pipeline-stages", std::to_string(stages)});
  if (stages > 1) {
    args.insert(args.end(), {"--partition", c.pipeline.partition == "flops" ? "flops" : "auto"});
  } else {
    // Data parallelism: nothing to cut, so the partition flags go back to their defaults.
    args.insert(args.end(), {"--partition", "uniform", "--explain-partition=false", "--keep-partition=false"});
  }
  return args;
}

}  // namespace

JobConfig chooseStages(const JobConfig& c) {
  const auto input = profileLocally(localJobOf(c));
  pipeline::PlanRequest everyShape;  // stages 0: every S dividing the workers
  const auto ranked = pipeline::rankPlacements(input, everyShape);
  if (ranked.empty())
    throw UsageError(
        fmt::format("--pipeline-stages auto: no shape of {} workers fits every worker's "
                    "--memory-limit-mb (see 'balancenet plan' with the same flags)",
                    c.launch.worldSize()));
  // The best placement of each shape, best first; a shape is its S (its replicas follow from the workers).
  std::cerr << "balancenet: --pipeline-stages auto: shapes ranked by predicted step time (profiled on this host)\n"
            << rankedPlacementLines(ranked, c.trainer.globalBatch, kShownShapes);
  const int stages = ranked.front().stages;
  std::cerr << fmt::format("balancenet: chose --pipeline-stages {} ({})", stages,
                           stages == 1 ? "data parallelism" : ranked.front().describe())
            << std::endl;
  JobConfig chosen = parseTrainCommandLine(argsWithShape(c, stages));
  chosen.trainer.runDir = c.trainer.runDir;  // filled in after validation: the same run, the same directory
  chosen.trainer.progressSeconds = c.trainer.progressSeconds;
  return chosen;
}

}  // namespace balancenet::cli

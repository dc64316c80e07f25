// The global batch's size and split: declared for train, launch, plan and simulate; validated for train and launch.
#include "balancenet/cli/flags/AllocationFlags.h"

#include <algorithm>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/adaptive/BatchSizing.h"
#include "balancenet/adaptive/LrScaling.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::cli {
using job::JobConfig;
using job::kAutoStages;

// --global-batch's help gives auto's defaults; auto starts at the fixed default B (adaptive/BatchSizing.h).
static_assert(adaptive::kDefaultAutoStartBatch == trainer::kDefaultGlobalBatch,
              "--global-batch auto starts at the fixed default B");

// How the global batch is split over the workers.
void addAllocationFlags(CLI::App& app, JobConfig& c, AllocationRaw& raw) {
  app.add_option("--split", raw.split,
                 "Samples per worker, comma separated, summing to --global-batch (default: equal)");
  app.add_option("--policy", raw.policy,
                 "How the global batch is split: balanced (default), proportional, bno (the paper's formula), "
                 "equal, random, static (--split; the default when --split is given)");
  app.add_option("--rebalance-every", c.orchestration.rebalanceEvery, "Steps between split decisions")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--rebalance-budget", c.orchestration.rebalanceBudget,
                 "Double the rebalance period while one rebalance (metrics gather, decision, broadcast) costs more "
                 "than this share of the steps between two (e.g. 0.01 at thousands of workers); 0: fixed period")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--probe-peers", c.orchestration.probePeers,
                 "Probe the latency to k peers per worker (ring neighbours and seeded random ones) instead of all "
                 "pairs: O(N k) probes and O(k) metrics per worker; 0: all pairs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  addBnoNormalizeFlag(app, c.orchestration.bnoNormalize);
}

void addBnoNormalizeFlag(CLI::App& app, bool& normalize) {
  app.add_flag("--bno-normalize", normalize, "Rescale the bno policy's batch sizes to sum to --global-batch");
}

void addBatchSizingFlags(CLI::App& app, AllocationRaw& raw) {
  app.add_option(
         "--global-batch", raw.globalBatch,
         fmt::format("Samples per step over all workers. auto[:MIN:MAX[:START]]: chosen in [MIN, MAX] during training "
                     "for the most progress per second (goodput: the gradient noise scale against each worker's "
                     "measured speed), from START, the batch --lr is set for (auto: {} to {} from {}; START defaults "
                     "to {} within the range). B@STEP list (64,128@200): B by step",
                     adaptive::kDefaultAutoMinBatch, adaptive::kDefaultAutoMaxBatch, adaptive::kDefaultAutoStartBatch,
                     adaptive::kDefaultAutoStartBatch))
      ->capture_default_str();
  app.add_option("--lr-scaling", raw.lrScaling,
                 "How the learning rate follows a B other than the first (auto or scheduled --global-batch): "
                 "adascale (SGD's auto: the gain from the gradient noise scale), sqrt (Adam's auto), linear, none")
      ->capture_default_str();
}

CLI::Option* addGlobalBatchFlag(CLI::App& app, int64_t& target, const std::string& help) {
  return app.add_option("--global-batch", target, help)->capture_default_str();
}

namespace {
// --staleness > 0: SSP, whose workers each run ahead of the others (--comm ps).
bool stale(const RawFlags& raw) { return raw.comm.staleness != kUnset && raw.comm.staleness > 0; }
}  // namespace

// --global-batch's form, first: every check of B against the job (--max-workers, the pipelines, the split)
// takes the B of step 0.
void parseGlobalBatchFlag(JobConfig& c, const AllocationRaw& raw) {
  c.orchestration.batchSizing = adaptive::parseGlobalBatch(raw.globalBatch, c.trainer.globalBatch);
}

// An adaptive B against the rest of the job, and --lr-scaling, before the allocation that starts from the first B.
void validateBatchSizing(JobConfig& c, const AllocationRaw& raw, int world) {
  auto& sizing = c.orchestration.batchSizing;
  // Checked and resolved for this optimiser (auto: adascale or sqrt) even where B is fixed and it goes unused.
  sizing.lrScaling = adaptive::lrScalingName(adaptive::parseLrScaling(raw.lrScaling, c.trainer.optimizer.name));
  if (!sizing.adaptive()) return;
  const std::string what = fmt::format("--global-batch {}", raw.globalBatch);
  // The micro-batches and the stages' plan are made for one B; a server applies each update with its own rate.
  require(!c.pipeline.enabled() && c.pipeline.stages != kAutoStages,
          what + " is for data parallelism: a pipeline's micro-batches are planned for one B");
  require(c.comm.mode != comm::CommMode::ParameterServers,
          what + " needs the all-reducing modes: parameter servers apply each update at a rate of their own");
  // Each rank's own gradient is read after backward, before any sum: factors are sent during backward.
  require(!comm::capturesFactors(c.comm.mode),
          what + " reads each worker's whole gradient before the sum: not with --comm sfb or hybrid (factors)");
  // The noise scale compares the workers' own gradients: one worker has nothing to compare.
  require(sizing.mode != adaptive::BatchSizing::Mode::Auto || world >= 2,
          what + " measures the gradient noise scale across workers and needs at least 2 (give a number with 1)");
}

// --steps, --global-batch, --split, --policy. With pipelines, the split is over the pipelines (columns).
void validateAllocation(JobConfig& c, const RawFlags& raw, int world) {
  auto& t = c.trainer;
  require(t.steps > 0, fmt::format("--steps must be at least 1, got {}", t.steps));
  // --pipeline-stages auto: a worker per column until the launcher has chosen the shape (and validates again).
  const int columns = c.pipeline.stages == kAutoStages ? world : world / c.pipeline.stages;
  const std::string takers = c.pipeline.enabled() ? fmt::format("{} pipelines ({} workers / --pipeline-stages {})",
                                                                columns, world, c.pipeline.stages)
                                                  : fmt::format("{} workers", world);
  require(t.globalBatch >= columns,
          fmt::format("--global-batch {} is smaller than the {}: each needs at least 1 sample", t.globalBatch, takers));
  if (c.pipeline.enabled() && !raw.allocation.split.empty()) {
    const int entries = static_cast<int>(std::count(raw.allocation.split.begin(), raw.allocation.split.end(), ',')) + 1;
    require(entries == columns,
            fmt::format("--split has {} entries but the job has {}: one per pipeline", entries, takers));
  }
  validatePolicy(c, raw);
  // SSP's workers never meet to rebalance (validateParameterServers): under --policy equal they start, and stay,
  // equal even where a --split is given (it is still checked).
  const Split given = raw.allocation.split.empty() ? Split::equal(t.globalBatch, columns)
                                                   : Split::parse(raw.allocation.split, columns, t.globalBatch);
  const bool equalForSsp = stale(raw) && c.orchestration.policy == "equal";
  c.split = equalForSsp ? Split::equal(t.globalBatch, columns) : given;
}

// --policy, after --split: static when a split is given, else balanced (equal under SSP).
void validatePolicy(JobConfig& c, const RawFlags& raw) {
  // SSP needs a fixed split (see validateParameterServers): the default policy follows.
  auto& o = c.orchestration;
  o.policy = !raw.allocation.policy.empty()
                 ? raw.allocation.policy
                 : (raw.allocation.split.empty() ? (stale(raw) ? "equal" : "balanced") : "static");
  auto policies = orchestrator::policyNames();
  if (std::find(policies.begin(), policies.end(), o.policy) == policies.end())
    throw UsageError(fmt::format("unknown --policy '{}'; choose one of: {}", o.policy, fmt::join(policies, ", ")));
}

}  // namespace balancenet::cli

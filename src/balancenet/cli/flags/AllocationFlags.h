// AllocationFlags: how the global batch is sized and split over the workers: --global-batch (train's forms, and
// the plain number `plan` and `simulate` take), --lr-scaling, --split, --policy, --rebalance-every,
// --rebalance-budget, --probe-peers, --bno-normalize. Train declares them all, launch all but --global-batch and
// --lr-scaling, plan and simulate --global-batch as a number (simulate --bno-normalize too).
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::cli {

// The group's values as given, before validation converts them into config.split and config.orchestration.
struct AllocationRaw {
  std::string policy;  // empty: chosen from --split and --staleness (validatePolicy)
  std::string split;
  // --global-batch: a number, auto[:MIN:MAX] or a schedule (adaptive/BatchSizing.h)
  std::string globalBatch = std::to_string(trainer::kDefaultGlobalBatch);
  std::string lrScaling = "auto";  // --lr-scaling (adaptive/LrScaling.h), resolved for the optimiser
};

// --split, --policy, --rebalance-every, --rebalance-budget, --probe-peers, --bno-normalize: --split and --policy
// into `raw`, the rest into config.orchestration. Not --global-batch: a launched program's data loader has its own.
void addAllocationFlags(CLI::App& app, job::JobConfig& config, AllocationRaw& raw);
// --bno-normalize alone into `normalize` (simulate's policies take it as train's do).
void addBnoNormalizeFlag(CLI::App& app, bool& normalize);
// Train's --global-batch in all its forms (a number, auto[:MIN:MAX[:START]], B@STEP list) and --lr-scaling, as
// given, into `raw`.
void addBatchSizingFlags(CLI::App& app, AllocationRaw& raw);
// --global-batch as one number into `target`, its default shown from target's value (plan, simulate).
CLI::Option* addGlobalBatchFlag(CLI::App& app, int64_t& target, const std::string& help);

// --global-batch's form, first: config.trainer.globalBatch becomes the B of step 0 (every check of B against the
// job takes it) and config.orchestration.batchSizing what B does later (its lrScaling: validateBatchSizing's).
void parseGlobalBatchFlag(job::JobConfig& config, const AllocationRaw& raw);
// After the pipeline and --comm: --lr-scaling resolved for the optimiser, and an adaptive B against them and the
// workers. Before the allocation, which starts from the first B.
void validateBatchSizing(job::JobConfig& config, const AllocationRaw& raw, int world);
// --steps, the first B against the `world` workers (the pipelines, with --pipeline-stages), validatePolicy, then
// config.split from --split and the policy (equal under SSP's --policy equal), once.
void validateAllocation(job::JobConfig& config, const RawFlags& raw, int world);
// --policy, after --split: static when a split is given, else balanced (equal under SSP). UsageError naming an
// unknown one.
void validatePolicy(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli

// The optimisation flags: declared for train, validated into config.trainer's optimiser and schedule.
#include "balancenet/cli/flags/OptimizationFlags.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/precision/Precision.h"
#include "balancenet/recompute/RecomputeMode.h"
#include "balancenet/trainer/LrSchedule.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::cli {
using job::JobConfig;

// The optimiser and the learning-rate schedule.
void addOptimizationFlags(CLI::App& app, JobConfig& c, OptimizationRaw& raw) {
  auto& t = c.trainer;
  app.add_option("--optimizer", t.optimizer.name, "sgd, adam or adamw (Adam with decoupled --weight-decay)")
      ->capture_default_str();
  app.add_option("--lr", t.lr.baseLr, "Learning rate")->capture_default_str();
  app.add_option("--momentum", t.optimizer.momentum, "SGD momentum, in [0, 1)")->capture_default_str();
  app.add_option("--weight-decay", t.optimizer.weightDecay,
                 "Weight decay (>= 0): L2 on the gradient for sgd and adam, decoupled for adamw")
      ->capture_default_str();
  app.add_flag("--nesterov", t.optimizer.nesterov, "Nesterov momentum (SGD)");
  app.add_option("--clip-grad-norm", t.clipGradNorm,
                 "Scale the gradient down to this global L2 norm when above it, computed over the exact global "
                 "gradient (the same on every worker); 0: no clipping")
      ->capture_default_str();
  app.add_option("--accumulate", raw.accumulate,
                 "K or auto: split each worker's share of a step into K micro-steps whose gradients add up (less "
                 "memory, the same gradient; BatchNorm sees the smaller batches). auto: per worker and step, as few "
                 "as fit its memory (--memory-limit-mb, else a GPU's memory), so a worker short of memory keeps the "
                 "share its speed earns; a fixed K caps each worker's share at what K passes hold")
      ->capture_default_str();
  app.add_flag("--shard-state", t.shardState,
               "Each worker keeps the optimiser state of its own slice of the parameters only, slices sized by each "
               "worker's --memory-limit-mb (equal without): the gradient is still summed whole, each worker updates "
               "its slice and the slices are all-gathered (ZeRO stage 1, with unequal slices); for a model whose "
               "optimiser state does not fit the smallest worker");
  app.add_option("--recompute", raw.recompute,
                 "none, blocks or auto: blocks keeps only each block's input in the forward and runs the block again "
                 "in backward (about a third more compute, the same gradient), so a pass holds more samples; auto: "
                 "per worker, where its memory would otherwise hold its share down (under --accumulate auto: cut it "
                 "into many small passes)")
      ->capture_default_str();
  app.add_option("--precision", raw.precision,
                 "fp32, bf16 or fp16: the forward pass under autocast in that type (matrix products and convolutions; "
                 "weights, optimiser state and the exchanged gradient stay fp32); fp16 scales the loss dynamically and "
                 "skips steps whose gradient overflows (steps.csv's loss_scale and skipped)")
      ->capture_default_str();
  app.add_option("--warmup-steps", t.lr.warmupSteps, "Linear learning-rate warm-up")->capture_default_str();
  app.add_option("--lr-decay", raw.lrDecay, "constant, cosine (to --lr-min at the last step) or step")
      ->capture_default_str();
  app.add_option("--lr-min", t.lr.minLr, "Final learning rate of the cosine decay, in [0, --lr]")
      ->capture_default_str();
  app.add_option("--lr-step-every", t.lr.stepEvery, "Step decay period in steps")->capture_default_str();
  app.add_option("--lr-gamma", t.lr.gamma, "Step decay factor, in (0, 1]")->capture_default_str();
}

// Each value, then the decay and the schedule's length (--steps).
void validateOptimization(JobConfig& c, const OptimizationRaw& raw) {
  auto& t = c.trainer;
  require(t.lr.baseLr > 0, fmt::format("--lr must be positive, got {}", t.lr.baseLr));
  require(t.lr.warmupSteps >= 0, "--warmup-steps must not be negative");
  require(t.lr.minLr >= 0 && t.lr.minLr <= t.lr.baseLr,
          fmt::format("--lr-min must be in [0, --lr {}], got {}", t.lr.baseLr, t.lr.minLr));
  require(t.lr.gamma > 0 && t.lr.gamma <= 1, fmt::format("--lr-gamma must be in (0, 1], got {}", t.lr.gamma));
  require(t.lr.stepEvery >= 1, fmt::format("--lr-step-every must be at least 1, got {}", t.lr.stepEvery));
  require(t.optimizer.momentum >= 0 && t.optimizer.momentum < 1,
          fmt::format("--momentum must be in [0, 1), got {}", t.optimizer.momentum));
  require(t.optimizer.weightDecay >= 0,
          fmt::format("--weight-decay must not be negative, got {}", t.optimizer.weightDecay));
  require(t.optimizer.name == "sgd" || t.optimizer.name == "adam" || t.optimizer.name == "adamw",
          fmt::format("--optimizer must be sgd, adam or adamw, got '{}'", t.optimizer.name));
  require(t.clipGradNorm >= 0, fmt::format("--clip-grad-norm must not be negative, got {}", t.clipGradNorm));
  if (raw.accumulate == "auto") {
    t.accumulate = trainer::kAccumulateAuto;
  } else {
    const auto k = parseInteger<int64_t>(raw.accumulate);
    require(k && *k >= 1,
            fmt::format("--accumulate must be auto or a whole number at least 1, got '{}'", raw.accumulate));
    t.accumulate = *k;
  }
  t.recompute = recompute::parseRecomputeMode(raw.recompute);
  t.precision = precision::parsePrecision(raw.precision);
  t.lr.decay = trainer::LrSchedule::parseDecay(raw.lrDecay);
  t.lr.totalSteps = t.steps;
}

}  // namespace balancenet::cli

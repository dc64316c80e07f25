// Validation of the train flags: the groups' checks in order, then the checks across groups; one-line UsageErrors.
#include "balancenet/cli/flags/TrainValidation.h"

#include <fmt/format.h>

#include "balancenet/cli/flags/AllocationFlags.h"
#include "balancenet/cli/flags/CheckpointFlags.h"
#include "balancenet/cli/flags/CommFlags.h"
#include "balancenet/cli/flags/DeviceFlags.h"
#include "balancenet/cli/flags/EmulationFlags.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/ModelFlags.h"
#include "balancenet/cli/flags/OptimizationFlags.h"
#include "balancenet/cli/flags/PipelineFlags.h"
#include "balancenet/cli/flags/ResilienceFlags.h"
#include "balancenet/cli/flags/ResultFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/Error.h"
#include "balancenet/precision/Precision.h"
#include "balancenet/recompute/RecomputeMode.h"
#include "balancenet/worker/WorkerThreads.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// Checkpoint flags, after the others: their values and the combinations that cannot work.
void validateCheckpoints(const JobConfig& c) {
  validateCheckpointFlags(c.checkpoint);
  // The parameter servers own the weights and the optimiser state there; their shards are not saved.
  require(c.checkpoint.dir.empty() || c.comm.mode != comm::CommMode::ParameterServers,
          "--checkpoint-dir does not work with --comm ps (the servers' shards are not saved)");
}

// --clip-grad-norm and --accumulate with the ways of training that cannot honour them exactly.
void validateGradientShaping(const JobConfig& c) {
  const auto& t = c.trainer;
  require(t.clipGradNorm == 0 || c.comm.mode != comm::CommMode::ParameterServers,
          "--clip-grad-norm needs the whole gradient on the workers: not with --comm ps (the servers update)");
  require(t.accumulate == 1 || !comm::capturesFactors(c.comm.mode),
          "--accumulate needs whole gradients: not with --comm sfb or hybrid (factors of one micro-step each)");
  require(t.accumulate == 1 || !c.pipeline.enabled(),
          "--accumulate with --pipeline-stages: the stages already split each share into --micro-batches");
  require(!compression::compresses(c.comm.compression) || !c.pipeline.enabled(),
          "--grad-compress is not yet with --pipeline-stages (the stage replicas exchange float32)");
}

// --shard-state with what owns its own optimiser state (the pipeline stages, the parameter servers) or reads another
// step's gradient (--staleness). Checkpoints gather the slices (Trainer::checkpointState); an elastic group re-slices
// the state gathered at a planned re-form, but a dead worker's slice is gone: the group goes back to the newest
// checkpoint (ElasticAgent), so an elastic sharded job needs one.
void validateShardedState(const JobConfig& c) {
  if (!c.trainer.shardState) return;
  auto refuse = [](bool bad, const std::string& what) {
    require(!bad,
            "--shard-state is not yet with " + what + " (each worker holds only its slice of the optimiser state)");
  };
  refuse(c.pipeline.enabled(), "--pipeline-stages");
  refuse(c.comm.mode == comm::CommMode::ParameterServers, "--comm ps");
  require(
      !(c.resilience.elastic || c.resilience.join) || !c.checkpoint.dir.empty(),
      "--elastic with --shard-state needs --checkpoint-dir: a lost worker's slice of the optimiser state is rebuilt "
      "from the newest checkpoint");
  refuse(c.comm.staleness > 0, "--staleness");
}

// --recompute with what runs a forward otherwise: the pipeline's stages run their own blocks, and a synchronised
// BatchNorm's second forward would exchange its statistics again on the workers that recompute only.
void validateRecompute(const JobConfig& c) {
  if (c.trainer.recompute == recompute::RecomputeMode::None) return;
  require(!c.pipeline.enabled(), "--recompute is not yet with --pipeline-stages (the stages keep every activation)");
  require(!c.syncBatchNorm,
          "--recompute is not with --sync-bn (the second forward would exchange the BatchNorm statistics again, on "
          "the workers that recompute only)");
}

// --precision (after validateOptimization parsed it) with the ways of training that cannot take it.
void validatePrecision(const JobConfig& c) {
  const auto p = c.trainer.precision;
  require(p == precision::Precision::Fp32 || !c.pipeline.enabled(),
          "--precision bf16 and fp16 are not yet in the pipeline engine: without --pipeline-stages, or fp32");
  // The factor layers compute their own products outside autocast: not the low-type run one process makes.
  require(p == precision::Precision::Fp32 || !comm::capturesFactors(c.comm.mode),
          "--precision bf16 and fp16 are not yet with --comm sfb or hybrid (the factor layers compute in fp32)");
  // fp16 unscales and checks the summed gradient on the workers before the update; the servers update instead.
  require(!precision::scalesLoss(p) || c.comm.mode != comm::CommMode::ParameterServers,
          "--precision fp16 needs the summed gradient on the workers to unscale it: not with --comm ps (bf16 needs no "
          "scaling and works there)");
}

// Runs the checks of `check` that count workers; where this launcher only assumes the world (one --nproc-per-node
// on several hosts, see HostFlags.cpp), a refusal says so and names the list form.
template <typename Check>
void withAssumedWorldNamed(const JobConfig& c, Check check) {
  try {
    check();
  } catch (const UsageError& e) {
    const auto& l = c.launch;
    if (l.assumedWorldFlags.empty()) throw;
    throw UsageError(
        fmt::format("{} (this launcher assumes --nnodes {} x --nproc-per-node {} = {} workers until the "
                    "hosts meet; if hosts run different counts, give every host the list, e.g. "
                    "--nproc-per-node {},1)",
                    e.what(), l.nnodes, l.nprocPerNode, l.worldSize(), l.nprocPerNode));
  }
}

}  // namespace

void validateTrainFlags(JobConfig& c, const RawFlags& raw) {
  parseGlobalBatchFlag(c, raw.allocation);
  validateHosts(c, raw);
  validateComm(c, raw.comm);
  const int world = c.worker ? c.worker->worldSize : c.launch.worldSize();
  withAssumedWorldNamed(c, [&] {
    validatePipeline(c, raw, world);
    validateResilience(c, raw);
  });
  settleJobToken(c, raw.host.jobTokenFile);  // after --join, which makes this process a worker
  validateModel(c);
  validateGradientShaping(c);
  withAssumedWorldNamed(c, [&] {
    validateBatchSizing(c, raw.allocation, world);
    validateAllocation(c, raw, world);
    validateEmulation(c, raw.emulation, world);
  });
  validateParameterServers(c, raw.comm);
  validateOptimization(c, raw.optimization);
  validatePrecision(c);
  validateShardedState(c);
  validateRecompute(c);
  validateStopping(c.trainer, raw.result);
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  if (c.worker && !c.threadsGiven) worker::chooseDefaultThreads(c);
  c.trainer.modelName = c.model.name;
  validateCheckpoints(c);
  validateDevices(c, raw.device);
}

}  // namespace balancenet::cli

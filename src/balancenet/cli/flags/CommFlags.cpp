// The communication flags: declared for train, validated into config.comm.
#include "balancenet/cli/flags/CommFlags.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/Error.h"
#include "balancenet/ps/PushCodec.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// "allreduce (buckets overlapped with backward), flat (...), ..." from the registry.
std::string commModesHelp() {
  std::vector<std::string> items;
  for (const auto& m : comm::commModes()) items.push_back(fmt::format("{} ({})", m.name, m.help));
  return fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace

// How gradients travel.
void addCommFlags(CLI::App& app, JobConfig& c, CommRaw& raw) {
  app.add_option("--comm", raw.comm, "How gradients travel: " + commModesHelp())->capture_default_str();
  app.add_option("--ps", raw.servers,
                 "With --comm ps: parameter server processes to start beside the workers; each holds an equal share "
                 "of the parameters and runs the optimiser on it")
      ->default_str("");  // unset unless given: --print-config leaves it out
  app.add_option("--staleness", raw.staleness,
                 "With --comm ps: 0 (default) is BSP, exactly the all-reduce's training; s > 0 is SSP: a worker may "
                 "run up to s steps ahead of the slowest (needs a fixed split: --policy equal or static)")
      ->default_str("");  // unset unless given (0 with --comm ps): --print-config leaves it out
  app.add_option("--bucket-mb", c.comm.bucketMb, "All-reduce bucket size in MB (the first bucket is 1 MB, as in DDP)")
      ->capture_default_str();
  app.add_flag("--no-overlap", raw.noOverlap, "Send the buckets after backward instead of during it (for comparison)");
  app.add_option("--offload-below", c.comm.offloadBelow,
                 "With the all-reducing --comm modes (auto, allreduce, flat, hd, a2a): a worker whose share of the "
                 "batch is below this fraction of the largest share hands its gradient to a fast peer instead of "
                 "joining the all-reduce (0: never); with it, --policy balanced may leave a worker whose samples are "
                 "worth less than its hand-over out of the exchange (a share of 0) until it gets faster")
      ->capture_default_str();
  app.add_flag("--explain-comm", c.comm.explain, "Print how each layer's gradient is synchronised, at start");
  app.add_option("--grad-compress", raw.compression,
                 "none, bf16, fp16, int8, powersgd or powersgd:RANK: how the gradients cross the wire, each with error "
                 "feedback (what compression loses is added to the next step's gradient). bf16/fp16: half the bytes; "
                 "int8: a quarter (8-bit codes, a scale per chunk; an all-to-all and an all-gather); powersgd: each "
                 "matrix as two rank-RANK factors (default rank 1), vectors whole. Lossy, so off by default. With "
                 "--comm allreduce, flat or auto (which then tries those two only), and ps (its pushes; not powersgd)")
      ->capture_default_str();
  app.add_option("--compress-warmup", raw.compressWarmup,
                 "With --grad-compress: the first STEPS steps exchange exact float32, then compression starts "
                 "(PyTorch PowerSGD's start_powerSGD_iter); default 0")
      ->type_name("STEPS")
      ->default_str("");  // unset unless given: --print-config leaves it out
  app.add_flag("--no-error-feedback", raw.noErrorFeedback,
               "With --grad-compress: drop what compression loses instead of adding it to the next step's gradient "
               "(for comparison: the convergence table in docs/benchmarks.md)");
  app.add_flag("--allow-lossy-comm", c.comm.allowLossy,
               "With --comm auto: also try fewer bits on the wire (error feedback): both ring exchanges in bf16, the "
               "buckets in int8 and as PowerSGD at rank 4; one is kept only where its steps are 10% faster than the "
               "exact exchanges'; the choice and its gain are logged and in summary.json (comm_auto)");
}

// --comm, --bucket-mb, --no-overlap, --offload-below (the parameter servers' flags after the policy: see
// validateParameterServers).
void validateComm(JobConfig& c, const CommRaw& raw) {
  auto mode = comm::commModeNamed(raw.comm);
  require(mode.has_value(),
          fmt::format("unknown --comm '{}'; choose one of: {}", raw.comm, fmt::join(comm::commModeNames(), ", ")));
  c.comm.mode = *mode;
  require(c.comm.bucketMb > 0, fmt::format("--bucket-mb must be positive, got {}", c.comm.bucketMb));
  c.comm.overlap = !raw.noOverlap;
  c.comm.compression = compression::parseGradCompression(raw.compression);
  if (raw.compressWarmup != kUnset) {
    require(compression::compresses(c.comm.compression), "--compress-warmup is for --grad-compress");
    require(raw.compressWarmup >= 0, fmt::format("--compress-warmup must not be negative, got {}", raw.compressWarmup));
    c.comm.compression.warmupSteps = raw.compressWarmup;
  }
  if (raw.noErrorFeedback) {
    require(compression::compresses(c.comm.compression), "--no-error-feedback is for --grad-compress");
    c.comm.compression.errorFeedback = false;
  }
  const bool ring = c.comm.mode == comm::CommMode::Auto || c.comm.mode == comm::CommMode::AllReduce ||
                    c.comm.mode == comm::CommMode::Flat;
  const bool ps = c.comm.mode == comm::CommMode::ParameterServers;
  require(!compression::compresses(c.comm.compression) || ring || ps,
          fmt::format("--grad-compress is for --comm allreduce, flat, auto or ps (got --comm {}): the other exchanges "
                      "move float32 or factors",
                      raw.comm));
  if (ps) ps::checkPushCompression(c.comm.compression);
  require(!c.comm.allowLossy || c.comm.mode == comm::CommMode::Auto,
          fmt::format("--allow-lossy-comm is for --comm auto (got --comm {}); give --grad-compress to choose yourself",
                      raw.comm));
  require(c.comm.offloadBelow >= 0 && c.comm.offloadBelow <= 1,
          fmt::format("--offload-below must be between 0 and 1, got {}", c.comm.offloadBelow));
}

// --comm ps, --ps, --staleness; runs after the split and the policy are settled.
void validateParameterServers(JobConfig& c, const CommRaw& raw) {
  auto& p = c.comm;
  if (p.mode != comm::CommMode::ParameterServers) {
    require(raw.servers == kUnset, fmt::format("--ps is for --comm ps (got --comm {})", raw.comm));
    require(raw.staleness == kUnset, fmt::format("--staleness is for --comm ps (got --comm {})", raw.comm));
    return;
  }
  require(raw.servers != kUnset, "--comm ps needs --ps K, the number of parameter servers (K >= 1)");
  require(raw.servers >= 1, fmt::format("--ps must be at least 1 with --comm ps, got {}", raw.servers));
  p.servers = raw.servers;
  p.staleness = raw.staleness == kUnset ? 0 : raw.staleness;
  require(p.staleness >= 0, fmt::format("--staleness must not be negative, got {}", p.staleness));
  require(!c.worker || c.worker->storeHostedByLauncher,
          "--comm ps needs the balancenet launcher, which starts the servers: run 'balancenet train' without RANK set");
  require(!c.server || *c.server < p.servers,
          fmt::format("parameter server {} does not exist with --ps {}", c.server.value_or(0), p.servers));
  if (p.staleness == 0) return;
  const auto& policy = c.orchestration.policy;
  // The orchestrator's periodic gather and synchronised BatchNorm are barriers among the workers.
  require(policy == "equal" || policy == "static",
          fmt::format("--staleness {} (SSP) needs a fixed split: --policy equal or static, not --policy {}",
                      p.staleness, policy));
  require(!c.syncBatchNorm, "--sync-bn synchronises every forward pass, which --staleness > 0 (SSP) must not");
}

}  // namespace balancenet::cli

// The resilience flags: declared alike for train and launch, validated into config.resilience.
#include "balancenet/cli/flags/ResilienceFlags.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/CommMode.h"
#include "balancenet/core/Error.h"

namespace balancenet::cli {
using job::JobConfig;
using job::WorkerIdentity;

// Surviving dead and stalled workers, joining a running job.
void addResilienceFlags(CLI::App& app, JobConfig& c, ResilienceRaw& raw) {
  auto& r = c.resilience;
  app.add_option("--stall-timeout", raw.stallTimeoutS,
                 "Watchdog: seconds a collective may wait for its peers; then every rank names the missing ranks "
                 "and their last step, and the job stops instead of hanging (0, the default: --rendezvous-timeout)");
  app.add_flag("--elastic", r.elastic,
               "Survive dead workers: the others notice within --peer-timeout, re-form the group without them, "
               "take the newest committed state from a survivor and go on with the global batch split over "
               "fewer workers; new workers (--max-restarts, --join) are admitted at the next step boundary");
  app.add_option("--min-workers,--min-nodes", r.minNodes,
                 "With --elastic: stop the job when fewer workers remain (--min-nodes is an alias)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-workers,--max-nodes", r.maxNodes,
                 "With --elastic: admit joiners up to this many workers (default: the launched number; --max-nodes "
                 "is an alias)");
  app.add_option("--peer-timeout", raw.peerTimeoutS,
                 "With --elastic: seconds a collective waits for a silent (stopped, unreachable) peer before it "
                 "is dropped; a killed peer is noticed at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-restarts", r.maxRestarts,
                 "With --elastic: the launcher starts a dead worker again this many times in all; it rejoins at "
                 "the next step boundary and receives the state from a peer")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--join", r.join,
               "Join a running --elastic job as one more worker (give the job's flags): a single-host job "
               "through --store-file, a job over several hosts at --master-addr:--master-port; it trains "
               "from the next step boundary on and ends with the job");
  app.add_option("--store-file", raw.joinStoreFile,
                 "With --join: the private store file of a single-host --elastic job (its launcher prints it "
                 "and writes it to RUN_DIR/join-store)");
}

// --elastic and friends, --stall-timeout, --join.
void validateResilience(JobConfig& c, const RawFlags& raw) {
  auto& r = c.resilience;
  // 0 is the documented default (the --rendezvous-timeout), so only a negative value is refused.
  require(raw.resilience.stallTimeoutS >= 0,
          fmt::format("--stall-timeout must not be negative (0: --rendezvous-timeout), got {}",
                      raw.resilience.stallTimeoutS));
  r.stallTimeout =
      raw.resilience.stallTimeoutS > 0 ? fromSeconds(raw.resilience.stallTimeoutS) : c.launch.rendezvousTimeout;
  r.peerTimeout = fromSeconds(raw.resilience.peerTimeoutS);
  const int world = c.worker ? c.worker->worldSize : c.launch.worldSize();
  if (r.maxNodes == 0) r.maxNodes = world;
  require(raw.resilience.joinStoreFile.empty() || r.join,
          "--store-file is only for --join (a launcher makes its job's own)");
  if (!raw.resilience.joinStoreFile.empty()) {
    // FileStore would create a missing file and wait there for a job that never comes.
    std::error_code ec;
    require(std::filesystem::is_regular_file(raw.resilience.joinStoreFile, ec),
            fmt::format("--store-file {}: no such file (is the job running? its launcher writes the path to "
                        "RUN_DIR/join-store)",
                        raw.resilience.joinStoreFile));
    c.launch.storeFile = raw.resilience.joinStoreFile;
  }
  if (!r.elastic) {
    require(!r.join, "--join needs --elastic (a fixed job admits nobody)");
    if (c.pipeline.enabled() && r.maxRestarts > 0) {
      // A pipeline cannot go on without one of its stages: its launcher restarts the whole job from the newest
      // checkpoint, which only a launcher that runs every worker can do.
      require(!c.checkpoint.dir.empty(),
              "--max-restarts with --pipeline-stages restarts the whole job from its newest checkpoint: give "
              "--checkpoint-dir");
      require(c.launch.nnodes == 1,
              "--max-restarts with --pipeline-stages needs a job on one host (a launcher restarts only its own "
              "workers)");
      return;
    }
    require(r.maxRestarts == 0,
            "--max-restarts needs --elastic (a fixed job cannot take a worker back), or --pipeline-stages with "
            "--checkpoint-dir (the whole job restarts)");
    return;
  }
  require(r.minNodes <= world, fmt::format("--min-workers {} is more than the {} workers launched", r.minNodes, world));
  require(r.maxNodes >= world,
          fmt::format("--max-workers {} is fewer than the {} workers launched", r.maxNodes, world));
  // A global batch of 0 is a launched program's: its own data loader sizes the batch.
  require(c.trainer.globalBatch == 0 || r.maxNodes <= c.trainer.globalBatch,
          fmt::format("--max-workers {} is more than --global-batch {} (every worker needs at least one sample)",
                      r.maxNodes, c.trainer.globalBatch));
  require(comm::allReduces(c.comm.mode),
          fmt::format("--elastic works with --comm auto, allreduce, flat, hd or a2a, not --comm {}", raw.comm.comm));
  require(!c.worker || c.worker->storeHostedByLauncher || r.join,
          "--elastic needs a store that outlives every worker: run 'balancenet train' without RANK set (the launcher "
          "hosts it)");
  require(!r.join || c.launch.masterPort != 0 || !c.launch.storeFile.empty(),
          "--join needs the running job's --store-file (one host) or --master-port and --master-addr (several)");
  if (r.join && !c.worker) {
    c.worker = WorkerIdentity{};
    c.worker->rank = -1;  // a new member id comes from the job's store
    c.worker->worldSize = world;
    c.worker->storeHostedByLauncher = true;
    c.worker->joining = true;
  }
}

}  // namespace balancenet::cli

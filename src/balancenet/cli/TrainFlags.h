// TrainFlags: the flags of `balancenet train` (declared with CLI11), their validation into a JobConfig,
// and parseTrainCommandLine, which does both without running anything (what the unit tests call).
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "balancenet/job/JobConfig.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

constexpr int kUnset = std::numeric_limits<int>::min();

// Flags whose value needs checking or resolving before it goes into the JobConfig.
struct RawFlags {
  int workers = kUnset;            // --workers (alias --nodes)
  std::string nprocPerNode = "1";  // --nproc-per-node: this host's workers, or every host's by node rank ("2,1")
  int servers = kUnset, staleness = kUnset;
  std::string policy;
  std::string comm = "auto";
  std::string slowdown, slowdownSchedule, nodeSpeed, speedSchedule, netDelayMs, netBandwidthMbps;
  bool noOverlap = false;
  double rendezvousTimeoutS = 60;
  double stallTimeoutS = 0, peerTimeoutS = 30;
  std::string split;
  int microBatches = kUnset;         // --micro-batches: unset is 4 x --pipeline-stages
  std::string pipelineStages = "1";  // --pipeline-stages: a number or auto (kAutoStages)
  std::string memoryLimitMb = "0";   // --memory-limit-mb: one cap or one per worker
  std::string joinStoreFile;
  std::string jobTokenFile;  // --job-token-file (cli/JobTokenFlags.h)
  std::string lrDecay = "constant";
  std::string globalBatch = "128";  // --global-batch: a number, auto[:MIN:MAX] or a schedule (adaptive/BatchSizing.h)
  double progressSeconds = -1;
  bool threadsGiven = false;  // else a worker takes its share of the cores
  bool printConfig = false;   // --print-config
  std::string configPath;     // --config: read by expandConfigFile before parsing; declared for --help
};

// The defaults `balancenet train` starts from.
job::JobConfig defaultJobConfig();

// Declares every train flag on `train`, bound to `config` and `raw`.
void addTrainFlags(CLI::App& train, job::JobConfig& config, RawFlags& raw);

// Flag groups `balancenet federate` shares with train (declared once, here):
// who runs where and who may join (--nnodes, --node-rank, --master-addr, --job-token, --job-token-file, ...),
void addLaunchFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);
// --elastic, --min-workers, --max-workers, --peer-timeout, --max-restarts, --stall-timeout, --join,
void addResilienceFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);
// --split, --policy, --rebalance-every and the orchestrator's other flags (not --global-batch),
void addAllocationFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);
// --model, --width, --dropout, --sync-bn, --data-dir,
void addModelFlags(CLI::App& app, job::JobConfig& config);
// --slowdown, --node-speed and their schedules, --net-delay-ms, --net-bandwidth-mbps,
void addEmulationFlags(CLI::App& app, RawFlags& raw);
// --checkpoint-dir, --checkpoint-every, --keep-checkpoints, --resume,
void addCheckpointFlags(CLI::App& app, job::CheckpointOptions& options);
// --threads, --run-dir, --progress-seconds, --save-params, --log-level;
void addResultFlags(CLI::App& app, job::JobConfig& config, RawFlags& raw);
// and the validation of the launch, resilience, model, emulation and checkpoint groups, and of --policy (UsageError
// naming the flag). `world`: the processes the emulation lists have one value each for.
void validateLaunch(job::JobConfig& config, const RawFlags& raw);
void validateResilience(job::JobConfig& config, const RawFlags& raw);
void validatePolicy(job::JobConfig& config, const RawFlags& raw);
void validateModel(const job::JobConfig& config);
void validateEmulation(job::JobConfig& config, const RawFlags& raw, int world);
void validateCheckpointFlags(const job::CheckpointOptions& options);

// After parsing: checks the flags' values and combinations against each other and against the
// environment already read into config.worker / config.server, and fills in what follows from them.
// Throws UsageError with a one-line message naming the flag.
void validateTrainFlags(job::JobConfig& config, const RawFlags& raw);

// --pipeline-stages' value: a number of stages (at least 1) or "auto" (kAutoStages); else a UsageError.
int parsePipelineStages(const std::string& text);

// Parses `args` (the words after the subcommand's name) into what `app` (named as the subcommand) binds; with
// `expandConfig`, a --config FILE among them is expanded first. A parse error is a UsageError line.
void parseSubcommandWords(CLI::App& app, const std::vector<std::string>& args, bool expandConfig = false);

// `balancenet train ARGS` up to the point of running: ARGS (the words after "train"; --config FILE is
// expanded) parsed, the environment read (RANK, MASTER_PORT, ...), everything validated. Throws
// UsageError, a parse error included; --help is not handled here. config.argv is {"balancenet", "train", ARGS}.
job::JobConfig parseTrainCommandLine(const std::vector<std::string>& args);

}  // namespace balancenet::cli

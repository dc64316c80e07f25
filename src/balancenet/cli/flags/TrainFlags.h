// TrainFlags: the flags of `balancenet train`: what they hold before validation (RawFlags), their declaration
// from the flag groups (each group's flags and checks in its own <Group>Flags.h), and parseTrainCommandLine,
// which parses and validates (TrainValidation.h) without running anything (what the unit tests call).
#pragma once
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "balancenet/job/JobConfig.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

constexpr int kUnset = std::numeric_limits<int>::min();

// The JobConfig's durations in the seconds their flags take, and back.
inline double secondsOf(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }
inline std::chrono::milliseconds fromSeconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

// Flags whose value needs checking or resolving before it goes into the JobConfig.
struct RawFlags {
  int workers = kUnset;            // --workers (alias --nodes)
  std::string nprocPerNode = "1";  // --nproc-per-node: this host's workers, or every host's by node rank ("2,1")
  int servers = kUnset, staleness = kUnset;
  std::string policy;
  std::string comm = "auto";
  std::string slowdown, slowdownSchedule, nodeSpeed, speedSchedule, netDelayMs, netBandwidthMbps;
  bool noOverlap = false;
  double rendezvousTimeoutS = secondsOf(job::LaunchOptions{}.rendezvousTimeout);
  double stallTimeoutS = 0, peerTimeoutS = secondsOf(job::ResilienceOptions{}.peerTimeout);
  std::string split;
  int microBatches = kUnset;         // --micro-batches: unset is 4 x --pipeline-stages
  std::string pipelineStages = "1";  // --pipeline-stages: a number or auto (kAutoStages)
  std::string memoryLimitMb = "0";   // --memory-limit-mb: one cap or one per worker
  std::string joinStoreFile;
  std::string jobTokenFile;  // --job-token-file (cli/flags/JobTokenFlags.h)
  std::string lrDecay = "constant";
  // --global-batch: a number, auto[:MIN:MAX] or a schedule (adaptive/BatchSizing.h)
  std::string globalBatch = std::to_string(trainer::kDefaultGlobalBatch);
  double progressSeconds = -1;
  bool printConfig = false;  // --print-config
  std::string configPath;    // --config: read by expandConfigFile before parsing; declared for --help
};

// Declares every train flag on `train`, bound to `config` and `raw`: the groups in the order --help and
// --print-config list them, then --print-config and --config.
void addTrainFlags(CLI::App& train, job::JobConfig& config, RawFlags& raw);

// Parses `args` (the words after the subcommand's name) into what `app` (named as the subcommand) binds; with
// `expandConfig`, a --config FILE among them is expanded first. A parse error is a UsageError line.
void parseSubcommandWords(CLI::App& app, const std::vector<std::string>& args, bool expandConfig = false);

// `balancenet train ARGS` up to the point of running: ARGS (the words after "train"; --config FILE is
// expanded) parsed, the environment read (RANK, MASTER_PORT, ...), everything validated. Throws
// UsageError, a parse error included; --help is not handled here. config.argv is {"balancenet", "train", ARGS}.
job::JobConfig parseTrainCommandLine(const std::vector<std::string>& args);

}  // namespace balancenet::cli

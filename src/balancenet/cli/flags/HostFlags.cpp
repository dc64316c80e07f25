// The host flags: declared alike for train, launch and federate, validated into config.launch.
#include "balancenet/cli/flags/HostFlags.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"

namespace balancenet::cli {
using job::JobConfig;

// Who runs where: workers, hosts, the store.
void addHostFlags(CLI::App& app, JobConfig& c, HostRaw& raw) {
  // Words: a worker is one training process (a rank), a host is a machine, a member is a worker of an
  // elastic generation. --nodes, --min-nodes, --max-nodes are the older spellings of the worker flags;
  // --nnodes and --node-rank are torchrun's spellings and count hosts.
  app.add_option("--workers,--nodes", raw.workers,
                 "Workers (training processes) to run on this host (same as --nproc-per-node with --nnodes 1; "
                 "--nodes is an alias)")
      ->default_str("");  // unset unless given: --print-config leaves it out
  app.add_option("--nnodes,--hosts", c.launch.nnodes,
                 "Hosts (machines) in the job (torchrun's spelling; alias --hosts)")
      ->check(CLI::PositiveNumber);
  app.add_option("--node-rank,--host-rank", c.launch.nodeRank,
                 "This host's index in [0, --nnodes) (torchrun's spelling; alias --host-rank)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--nproc-per-node", raw.nprocPerNode,
                 "Workers on this host (hosts may differ: they meet and agree on the ranks), or every host's count "
                 "by node rank (2,1), which flags checked against the world size need when hosts differ")
      ->capture_default_str();
  app.add_option("--master-addr", c.launch.masterAddr, "Address of host 0, where the rendezvous store listens")
      ->capture_default_str();
  app.add_option("--master-port", c.launch.masterPort, "Store port; 0 picks a free one (single-host jobs only)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--rendezvous-timeout", raw.rendezvousTimeoutS,
                 "Seconds to wait for all workers to arrive, and for any collective, before failing")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option(
      "--iface", c.launch.iface,
      "Network interface for Gloo (default: loopback for a local job, else the one that routes to --master-addr)");
  app.add_flag("--force", c.launch.force,
               "Start this host's processes even when their estimated memory exceeds what the host has available");
  addJobTokenFlags(app, c, raw.jobTokenFile);
}

namespace {

// --nproc-per-node (this host's count, or every host's by node rank) or --workers (one host's): this host's count,
// settled once.
void validateWorkersPerHost(job::LaunchOptions& l, const HostRaw& raw) {
  const auto counts = job::parseWorkersPerHost(raw.nprocPerNode);
  require(counts.size() == 1 || static_cast<int>(counts.size()) == l.nnodes,
          fmt::format("--nproc-per-node {} has {} counts but --nnodes is {}: one per host, by node rank",
                      raw.nprocPerNode, counts.size(), l.nnodes));
  if (counts.size() > 1) l.hostWorkers = counts;
  const bool oneHostsCount = raw.workers != kUnset;
  if (oneHostsCount) {
    require(raw.workers >= 1, fmt::format("--workers must be at least 1, got {}", raw.workers));
    require(l.nnodes == 1, "--workers is for one host; with --nnodes use --nproc-per-node");
  }
  l.nprocPerNode = oneHostsCount ? raw.workers : counts.at(std::min(l.nodeRank, static_cast<int>(counts.size()) - 1));
}

// A launcher of several hosts given one count checks the flags below against --nnodes x its count until the hosts
// have met; they are named there if the hosts run another world (launch/HostMeeting.h).
void noteFlagsThatAssumeTheWorld(JobConfig& c, const RawFlags& raw) {
  auto& l = c.launch;
  if (c.worker || l.nnodes == 1 || !l.hostWorkers.empty()) return;
  const std::pair<bool, const char*> flags[] = {
      {!raw.allocation.split.empty(), "--split"},
      {raw.pipeline.memoryLimitMb.find(',') != std::string::npos, "--memory-limit-mb"},
      {!raw.emulation.slowdown.empty() || !raw.emulation.slowdownSchedule.empty(), "--slowdown"},
      {!raw.emulation.nodeSpeed.empty() || !raw.emulation.speedSchedule.empty(), "--node-speed"},
      {!raw.emulation.netDelayMs.empty(), "--net-delay-ms"},
      {!raw.emulation.netBandwidthMbps.empty(), "--net-bandwidth-mbps"},
      {raw.pipeline.pipelineStages != "1", "--pipeline-stages"},
      {c.resilience.minNodes != 1, "--min-workers"},
      {c.resilience.maxNodes != 0, "--max-workers"},
  };
  for (const auto& [given, flag] : flags)
    if (given) l.assumedWorldFlags.emplace_back(flag);
}

// srun and mpirun start each worker themselves and say how many there are: flags that say otherwise are a mistake
// in the job script, not something to guess around. (torchrun's and our own launcher's workers keep their flags.)
void validateSchedulerShape(const JobConfig& c) {
  const auto& l = c.launch;
  if (!c.worker || l.scheduler.empty() || l.scheduler == "torchrun") return;
  const int flagged = l.worldSize();  // --nproc-per-node 2,1: the sum
  if (flagged == 1 || flagged == c.worker->worldSize) return;
  std::string from = "the launcher";
  for (const auto& s : l.sources)
    if (s.setting == "world_size") from = s.from;
  throw UsageError(
      fmt::format("{}={} ({} starts each worker) but the flags ask for {} workers: drop --workers, --nnodes and "
                  "--nproc-per-node under srun or mpirun, or start {} tasks",
                  from, c.worker->worldSize, l.scheduler, flagged, flagged));
}

}  // namespace

// --workers, --nnodes, --node-rank, --nproc-per-node, --master-port, --rendezvous-timeout.
void validateHosts(JobConfig& c, const RawFlags& raw) {
  auto& l = c.launch;
  validateWorkersPerHost(l, raw.host);
  noteFlagsThatAssumeTheWorld(c, raw);
  validateSchedulerShape(c);
  require(l.nodeRank < l.nnodes, fmt::format("--node-rank {} must be below --nnodes {}", l.nodeRank, l.nnodes));
  require(l.nnodes == 1 || c.worker || l.masterPort != 0,
          "a job over several hosts needs --master-port (and --master-addr) known to all of them");
  l.rendezvousTimeout = fromSeconds(raw.host.rendezvousTimeoutS);
}

std::vector<std::string> withAgreedHosts(std::vector<std::string> words, const job::LaunchOptions& launch) {
  words.insert(words.end(), {"--nproc-per-node", job::workersPerHostText(launch.hostWorkers)});  // the last wins
  return words;
}

}  // namespace balancenet::cli

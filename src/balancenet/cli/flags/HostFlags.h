// HostFlags: who runs where: the workers (--workers, --nproc-per-node), the hosts (--nnodes, --node-rank), the
// store (--master-addr, --master-port, --rendezvous-timeout), --iface, --force, and who may join (the job token
// flags, JobTokenFlags.h). Train, launch and federate share them.
#pragma once
#include <string>
#include <vector>

#include "balancenet/cli/flags/FlagGroup.h"
#include "balancenet/cli/flags/FlagValues.h"
#include "balancenet/job/LaunchOptions.h"

namespace balancenet::cli {

// The group's values as given, before validateHosts converts them into config.launch.
struct HostRaw {
  int workers = kUnset;            // --workers (alias --nodes)
  std::string nprocPerNode = "1";  // --nproc-per-node: this host's workers, or every host's by node rank ("2,1")
  double rendezvousTimeoutS = secondsOf(job::LaunchOptions{}.rendezvousTimeout);
  std::string jobTokenFile;  // --job-token-file (JobTokenFlags.h)
};

// Declares the group on `app`: the worker counts, --rendezvous-timeout and --job-token-file into `raw`, the rest
// into config.launch.
void addHostFlags(CLI::App& app, job::JobConfig& config, HostRaw& raw);

// After the environment is read (config.worker): config.launch's shape (workers per host, every host's count,
// the flags checked against an assumed world) and rendezvous timeout. UsageError naming the flag.
void validateHosts(job::JobConfig& config, const RawFlags& raw);

// `words` (a launcher's flags) with --nproc-per-node set to every host's count as the hosts agreed
// (launch.hostWorkers): what resolves the job again for their world (launch/LocalLauncher.h).
std::vector<std::string> withAgreedHosts(std::vector<std::string> words, const job::LaunchOptions& launch);

}  // namespace balancenet::cli

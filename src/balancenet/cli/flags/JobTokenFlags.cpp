// The job token flags: declared once for every command that forms a job, settled after the environment is read.
#include "balancenet/cli/flags/JobTokenFlags.h"

#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/comm/admission/ClosedJob.h"
#include "balancenet/comm/admission/JobToken.h"
#include "balancenet/comm/admission/JobTokenFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// Whether this process serves the job's store: a launcher of host 0, or rank 0 started by another launcher.
bool servesTheStore(const JobConfig& c) {
  if (c.worker) return job::rendezvousOptions(c).hostStore;
  return !c.server && c.launch.nodeRank == 0;
}

// Whether this process serves or reaches a TCP store: every process of a job over several hosts, and a process
// started by another launcher (or --join) without a store file. A launcher of one host uses a private file, or,
// for a launched program, a TCP store with a token it makes up (launch/LocalLauncher.cpp).
bool usesTcpStore(const JobConfig& c) {
  return c.launch.storeFile.empty() && (c.worker || c.server || c.launch.nnodes > 1);
}

std::string autoToken(JobConfig& c) {
  if (auto given = launch::jobTokenFromEnvironment()) return *given;
  require(servesTheStore(c),
          "--job-token auto makes the token on the process that serves the job's store (node 0's launcher, or rank 0 "
          "started by another launcher), which this one does not: give it the token node 0 printed "
          "(BALANCENET_JOB_TOKEN=... or --job-token-file FILE)");
  c.launch.tokenMadeUp = true;
  return comm::randomJobToken();
}

}  // namespace

void addJobTokenFlags(CLI::App& app, JobConfig& c, std::string& tokenFile) {
  auto* token =
      app.add_option("--job-token", c.launch.jobToken,
                     "Shared secret of a job over several hosts: only processes given the same token join it (a wrong "
                     "one is refused at once); required when --master-addr is not a loopback address. auto: the "
                     "store's host (node 0) makes one up and prints it for the other hosts. Prefer "
                     "--job-token-file or the environment variable BALANCENET_JOB_TOKEN: command lines are visible "
                     "to every user of a host. See docs/reliability.md")
          ->check(CLI::Validator(
              [](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); }, "TOKEN"));
  auto* file = app.add_option("--job-token-file", tokenFile,
                              "Read the job token from this file's first line; the file must be private to its owner "
                              "(chmod 600), as ssh requires of a key");
  auto* open = app.add_flag("--insecure-open-job", c.launch.insecureOpen,
                            "Run a job whose store is reachable from other hosts without a token: any process that "
                            "reaches its port can join it, read its rendezvous or abort it");
  token->excludes(file);
  open->excludes(token)->excludes(file);
}

void settleJobToken(JobConfig& c, const std::string& tokenFile) {
  auto& token = c.launch.jobToken;
  if (!tokenFile.empty())
    token = comm::readJobTokenFile(tokenFile);
  else if (token == kAutoJobToken)
    token = autoToken(c);
  else if (token.empty())
    token = launch::jobTokenFromEnvironment().value_or("");  // launch's launcher reads no worker environment
  if (usesTcpStore(c)) comm::requireClosedJob(job::rendezvousOptions(c));
}

void announceJobToken(const JobConfig& c) {
  if (!c.launch.tokenMadeUp) return;
  const std::string& t = c.launch.jobToken;
  // On stderr, whatever the log level: the other hosts cannot join without it.
  std::cerr << fmt::format(
                   "balancenet: --job-token auto made this job's token; give it to the other hosts' processes in "
                   "their environment or in a file only their user can read:\n"
                   "    export BALANCENET_JOB_TOKEN={}\n"
                   "    (umask 077 && echo {} > job-token) and --job-token-file job-token\n",
                   t, t)
            << std::flush;
}

}  // namespace balancenet::cli

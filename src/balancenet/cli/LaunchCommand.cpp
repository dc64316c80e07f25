// `balancenet launch`: torchrun's job for a user's own script (Debian's torchrun fails on Python 3.11).
#include "balancenet/cli/LaunchCommand.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/ProgramPath.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/launch/LocalLauncher.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

constexpr const char* kFooter =
    "Each worker gets torchrun's environment: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,\n"
    "MASTER_PORT (the launcher's TCP store), GROUP_RANK, TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS,\n"
    "TORCHELASTIC_RUN_ID, TORCHELASTIC_USE_AGENT_STORE=True (torch.distributed.init_process_group() joins the\n"
    "launcher's store), OMP_NUM_THREADS (--threads, unless already set); and balancenet's: BALANCENET_JOB_TOKEN\n"
    "(made up on one host), BALANCENET_JOB_CONFIG (the job these flags resolve to, for `import balancenet.torch`),\n"
    "and PYTHONPATH with balancenet's Python package first (docs/python.md: five lines give your DDP script\n"
    "balanced shares).\n"
    "An unmodified DDP script runs as under torchrun. Worker output is prefixed [rank r]; when a worker fails the\n"
    "others are stopped and one line names it.\n"
    "A PROGRAM that is a program itself (a native binary, a shell script, a command on PATH) runs as it is.\n"
    "Example: balancenet launch --workers 3 train.py --lr 0.1   (train.py gets --lr 0.1)";

// The program words as each worker runs them: {python, script, args...} or, with --no-python or a PROGRAM that
// is itself a program (programKind), {program, args...}.
void chooseProgram(JobConfig& c, const std::vector<std::string>& words) {
  require(!words.empty(),
          "no PROGRAM: balancenet launch [FLAGS] [--] PROGRAM [ARGS...] (a Python script, or with --no-python any "
          "program)");
  auto& p = c.program;
  if (p.python.empty() || programKind(words.front()) == ProgramKind::Executable) {
    p.executable = findExecutable(words.front(), "program");
    p.argv = words;
    return;
  }
  p.executable = p.python;
  p.argv = {p.python};
  p.argv.insert(p.argv.end(), words.begin(), words.end());
}

}  // namespace

void describeLaunchCommand(CLI::App& launch, JobConfig& config, LaunchRawFlags& raw) {
  launch.description(
      "Run your own script on local workers with torchrun's environment: balancenet launch [FLAGS] [--] PROGRAM "
      "[ARGS...]");
  addLaunchCommandFlags(launch, config, raw);
  launch.footer(kFooter);
}

int runLaunch(const CLI::App& launch, JobConfig& config, LaunchRawFlags& raw, const LaunchWords& words) {
  config.threadsGiven = launch.count("--threads") > 0;
  validateLaunchFlags(config, raw);
  chooseProgram(config, words.program);
  config.argv = words.flags;
  job::settleLoggingAndOutputs(config, raw.raw.result.progressSeconds);
  announceJobToken(config);
  // The hosts run another world than assumed: the flags again with every host's count, the program as chosen.
  const auto againForTheHosts = [](const JobConfig& c) {
    JobConfig again = parseLaunchFlags(withAgreedHosts(c.argv, c.launch));
    again.program = c.program;
    return again;
  };
  return launch::launchLocalWorkers(config, againForTheHosts);
}

}  // namespace balancenet::cli

// The flags of `balancenet launch`: train's flag groups where they mean the same, each declared once in its file.
#include "balancenet/cli/flags/LaunchFlags.h"

#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/ProgramPath.h"
#include "balancenet/cli/flags/AllocationFlags.h"
#include "balancenet/cli/flags/EmulationFlags.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/ResilienceFlags.h"
#include "balancenet/cli/flags/ResultFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/worker/WorkerThreads.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// What --split's valid entries add up to (a bad entry is Split::parse's error).
int64_t splitSum(const std::string& text) {
  std::stringstream in(text);
  int64_t sum = 0;
  for (std::string item; std::getline(in, item, ',');) sum += parseInteger<int64_t>(item).value_or(0);
  return sum;
}

// Options of train's groups that a launched program cannot honour: the flags say what they do, so none is kept
// that would silently do nothing.
void removeTrainOnlyOptions(CLI::App& app) {
  for (const char* name : {"--force", "--save-params", "--join", "--store-file"})
    app.remove_option(app.get_option(name));
}

}  // namespace

void addLaunchCommandFlags(CLI::App& app, JobConfig& c, LaunchRawFlags& f) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the resolved --run-dir wins
  addHostFlags(app, c, f.raw.host);
  addResilienceFlags(app, c, f.raw.resilience);
  addAllocationFlags(app, c, f.raw.allocation);
  app.get_option("--job-token")
      ->description(
          "Shared secret of the job: only processes given the same token join balancenet's rendezvous; required "
          "when --master-addr is not a loopback address. auto: node 0's launcher makes one up and prints it for the "
          "other hosts. Prefer --job-token-file or the environment variable BALANCENET_JOB_TOKEN: command lines are "
          "visible to every user of a host. On one host the launcher makes one up, since torch's env:// needs a TCP "
          "store port open to the host");
  app.get_option("--split")->description(
      "Samples per worker and step, comma separated, one per worker of the job: the global batch is their sum "
      "(default: the program's loader decides, split equally)");
  addEmulationFlags(app, f.raw.emulation);
  addResultFlags(app, c, f.raw.result);
  removeTrainOnlyOptions(app);
  app.add_option("--python", f.python,
                 "The Python that runs PROGRAM (default: the virtual environment's where balancenet was installed into "
                 "one by its wheel, else the Python balancenet was built for, whose torch it links, when it exists, "
                 "else python3 on PATH)");
  app.add_flag("--no-python", f.noPython, "Run PROGRAM itself (found on PATH like execvp), not a Python script");
}

void validateLaunchFlags(JobConfig& c, const LaunchRawFlags& f) {
  const RawFlags& raw = f.raw;
  validateHosts(c, raw);
  const int world = c.launch.worldSize();
  validateResilience(c, raw);
  settleJobToken(c, raw.host.jobTokenFile);
  if (!raw.allocation.split.empty()) {
    c.split = Split::parse(raw.allocation.split, world, splitSum(raw.allocation.split));
    c.trainer.globalBatch = c.split.total();
  }
  validatePolicy(c, raw);
  validateEmulation(c, raw.emulation, world);
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  if (!c.threadsGiven) worker::chooseDefaultThreads(c);
  if (raw.result.progressSeconds >= 0) c.trainer.progressSeconds = raw.result.progressSeconds;
  require(!(f.noPython && !f.python.empty()), "--python and --no-python exclude each other");
  c.program.python = f.noPython ? "" : findPython(f.python);
}

JobConfig parseLaunchFlags(const std::vector<std::string>& flagWords) {
  CLI::App launch{"balancenet launch", "launch"};
  JobConfig config = job::defaultLaunchConfig();
  LaunchRawFlags raw;
  addLaunchCommandFlags(launch, config, raw);
  parseSubcommandWords(launch, flagWords);
  config.threadsGiven = launch.count("--threads") > 0;
  validateLaunchFlags(config, raw);
  config.argv = flagWords;
  return config;
}

LaunchWords splitLaunchWords(const std::vector<std::string>& words) {
  // The flags' own declarations say which take a value, so "--workers 3 train.py" splits after the 3.
  CLI::App declared;
  JobConfig config;
  LaunchRawFlags raw;
  addLaunchCommandFlags(declared, config, raw);
  LaunchWords out;
  size_t i = 0;
  for (; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      out.program.assign(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end());
      return out;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the program ("-" alone too: a path, not a flag)
    out.flags.push_back(word);
    const CLI::Option* option = word.find('=') == std::string::npos ? declared.get_option_no_throw(word) : nullptr;
    if (option && option->get_expected_max() > 0 && i + 1 < words.size()) out.flags.push_back(words[++i]);
  }
  out.program.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  return out;
}

}  // namespace balancenet::cli

// The balancenet command: subcommands declared with CLI11, parsed, validated, dispatched; errors become one line.
#include "balancenet/cli/CommandLine.h"

#include <algorithm>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/CompareCommand.h"
#include "balancenet/cli/FederateCommand.h"
#include "balancenet/cli/FederateJoinCommand.h"
#include "balancenet/cli/FederateServeCommand.h"
#include "balancenet/cli/LaunchCommand.h"
#include "balancenet/cli/ModelsCommand.h"
#include "balancenet/cli/PlanCommand.h"
#include "balancenet/cli/ReportCommand.h"
#include "balancenet/cli/SimulateCommand.h"
#include "balancenet/cli/TrainCommand.h"
#include "balancenet/cli/WorkerCommand.h"
#include "balancenet/cli/YamlConfig.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/FatalError.h"
#include "balancenet/core/Logging.h"
#include "balancenet/device/GpuSupport.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/job/JobDefaults.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// The whole command line: every subcommand with its flags, bound to the values they fill.
struct Commands {
  CLI::App app{
      "balancenet: data-parallel training on heterogeneous clusters, with a per-worker share of every global batch.\n"
      "Example: balancenet train --workers 4 --model cnn --global-batch 256 --split 100,100,40,16"};
  CLI::App* train = nullptr;
  JobConfig config = job::defaultJobConfig();
  RawFlags raw;
  ReportOptions reportOptions;
  CLI::App* compare = nullptr;
  CompareOptions compareOptions;
  ModelsOptions modelsOptions;
  PlanOptions planOptions;
  SimulateFlags simulateFlags;
  CLI::App* federate = nullptr;
  FederateFlags federateFlags;
  CLI::App* serve = nullptr;
  ServeFlags serveFlags;
  CLI::App* join = nullptr;
  JoinFlags joinFlags;
  CLI::App* launch = nullptr;
  JobConfig launchConfig = job::defaultLaunchConfig();
  LaunchRawFlags launchRaw;
  LaunchWords launchWords;  // CLI11 parses only launch's flags: the program's words are no business of it

  Commands() {
    app.set_version_flag("--version", "balancenet 0.1.0");
    app.require_subcommand(1);
    train = app.add_subcommand("train", "Train a model data-parallel (spawns --workers local workers)");
    addTrainFlags(*train, config, raw);
    addModelsFlags(*app.add_subcommand("models", "List the model zoo with parameter counts and FLOPs per sample"),
                   modelsOptions);
    addPlanFlags(*app.add_subcommand("plan",
                                     "Rank the placements of a model on workers of given speeds and memory "
                                     "caps (profiled on this machine), as --partition auto plans them"),
                 planOptions);
    addReportFlags(*app.add_subcommand("report", "One HTML page (tables and charts) for one or more run directories"),
                   reportOptions);
    addSimulateFlags(*app.add_subcommand("simulate", "Simulate the policies on a cluster of up to thousands of nodes"),
                     simulateFlags);
    federate = app.add_subcommand(
        "federate",
        "Federated training: one server and --clients client processes, each training on its own non-IID shard");
    addFederateFlags(*federate, federateFlags);
    serve = federate->add_subcommand(
        "serve", "One federated server, no launcher: clients enrol over the network (federate join) and come and go");
    addServeFlags(*serve, serveFlags);
    join = federate->add_subcommand("join", "One federated client with its own data, enrolling with a federate serve");
    addJoinFlags(*join, joinFlags);
    compare = app.add_subcommand("compare", "Run one scenario with several policies and models; table and charts");
    addCompareFlags(*compare, compareOptions);
    launch = app.add_subcommand("launch");
    describeLaunchCommand(*launch, launchConfig, launchRaw);
  }

  // `balancenet launch FLAGS PROGRAM ARGS`: FLAGS alone go on to CLI11 (no --config expansion: a --config among
  // the program's arguments is the program's), PROGRAM ARGS are kept aside, untouched.
  std::vector<std::string> setLaunchProgramAside(const std::vector<std::string>& args) {
    launchWords = splitLaunchWords({args.begin() + 2, args.end()});
    std::vector<std::string> kept(args.begin(), args.begin() + 2);
    kept.insert(kept.end(), launchWords.flags.begin(), launchWords.flags.end());
    return kept;
  }
};

// Parses argv (a --config file expanded into flags). Returns an exit code when parsing ends the program
// (--help, --version, a parse error: one line), nothing when a subcommand is to run.
std::optional<int> parse(Commands& commands, int argc, char** argv) {
  try {
    std::vector<std::string> args(argv, argv + argc);
    args = args.size() > 1 && args[1] == "launch" ? commands.setLaunchProgramAside(args)
                                                  : expandConfigFile(args, *commands.train);
    // `compare ... -- FLAGS`: CLI11 hands what follows a subcommand's "--" back to the top level, which has
    // no use for it; compare passes unknown flags on to its runs anyway, so the "--" is dropped.
    if (args.size() > 1 && args[1] == "compare")
      if (auto mark = std::find(args.begin() + 2, args.end(), "--"); mark != args.end()) args.erase(mark);
    std::vector<const char*> expanded;
    for (const auto& a : args) expanded.push_back(a.c_str());
    commands.app.parse(static_cast<int>(expanded.size()), expanded.data());
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return commands.app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return commands.app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return commands.app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "balancenet: error: " << firstLine(e.what()) << " (see --help)" << std::endl;
    return 2;
  } catch (const UsageError& e) {  // thrown by a flag's own parser (--augment, --loss, --normalize), mid-parse
    std::cerr << "balancenet: error: " << e.what() << std::endl;
    return 2;
  }
}

// Runs the subcommand that was given; its exit code.
int dispatch(Commands& commands, int argc, char** argv) {
  if (commands.app.got_subcommand("models")) return runModels(commands.modelsOptions);
  if (commands.app.got_subcommand("plan")) return runPlan(commands.planOptions);
  if (commands.app.got_subcommand("simulate")) return runSimulate(commands.simulateFlags);
  if (commands.app.got_subcommand("report")) return runReport(commands.reportOptions);
  if (commands.federate->got_subcommand("serve")) return runServe(commands.serveFlags);
  if (commands.federate->got_subcommand("join")) return runJoin(commands.joinFlags);
  if (commands.app.got_subcommand("federate")) return runFederate(commands.federateFlags, argc, argv);
  if (commands.app.got_subcommand("launch"))
    return runLaunch(*commands.launch, commands.launchConfig, commands.launchRaw, commands.launchWords);
  if (commands.app.got_subcommand("compare")) {
    setupLogging("info");
    commands.compareOptions.trainFlags = commands.compare->remaining();
    return runCompare(commands.compareOptions, "/proc/self/exe");
  }
  return runTrain(*commands.train, commands.config, commands.raw, argc, argv);
}

}  // namespace

int runCommandLine(int argc, char** argv) {
  installFatalErrorHandler();  // even an exception on a library's thread ends as one line, not a core dump
  quietTorchLogging();
  ignoreBrokenPipes();                     // seen on the testbed when host 0's worker died: SIGPIPE killed the others
  device::loadGpuSupportWhereADriverIs();  // before any torch call (device/GpuSupport.h)
  try {
    // A process of balancenet's launcher: its job is resolved already, no flag is declared or parsed.
    if (argc == 2 && std::string(argv[1]) == kWorkerCommand) return runLaunchedProcess();
    Commands commands;
    if (auto exitCode = parse(commands, argc, argv)) return *exitCode;
    return dispatch(commands, argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "balancenet: error: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {  // RuntimeFailure, InternalError, and what libraries throw
    std::cerr << "balancenet: error: " << firstLine(e.what()) << std::endl;
    return 1;
  }
}

}  // namespace balancenet::cli
